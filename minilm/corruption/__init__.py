"""Every input corruption of the pre-training families, as pure NumPy functions.

Each takes its randomness as ``rng: numpy.random.Generator`` and returns new arrays; none mutates
its input. One file per family:

* ``bert.py``    — BERT's masked LM (80/10/10), whole-word grouping
* ``roberta.py`` — RoBERTa's dynamic / static masking
* ``roberta_wwm.py`` — RoBERTa's whole-word masking (byte-level BPE words, ``Ġ`` starts)
* ``electra.py`` — ELECTRA's masking, generator sampling, replaced-token labels
* ``xlnet.py``   — XLNet's factorisation order and permutation masks
* ``t5.py``      — T5's span corruption with sentinels
* ``bart.py``    — BART's five noising functions
"""
from .bert import *  # noqa: F401,F403
from .roberta import *  # noqa: F401,F403
from .roberta_wwm import *  # noqa: F401,F403
from .electra import *  # noqa: F401,F403
from .xlnet import *  # noqa: F401,F403
from .t5 import *  # noqa: F401,F403
from .bart import *  # noqa: F401,F403
