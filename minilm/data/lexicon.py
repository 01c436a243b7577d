"""The word tables behind the synthetic corpus: topics, number-marked nouns and verbs, names.

Every table is plain data, so that a test or an experiment can ask "which words are singular
subjects?" or "which category is `dog` in?" without parsing generated text.

* A **topic** (animals, cities, food, sport, music) owns its subject nouns, verbs, objects and
  place nouns. A document draws one topic, so "is sentence B from the same document?" is learnable.
* Nouns and verbs come as **(singular, plural)** pairs: `("dog", "dogs")`, `("runs", "run")`.
  English marks number on both, and they must agree (`the dog ... runs`, `the dogs ... run`).
  The plural verb is also the base form used after "does not" / "do not".
* **Multi-token names** (`new york`, `los angeles`, ...) share first words (`new` -> york / delhi /
  orleans, `san` -> francisco / diego), so the second word depends on the first one jointly.

The tables are disjoint where it matters: no word is both a subject or place noun and a verb, and
"new", "los", "san", ... appear only inside names.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Topic", "TOPICS", "TOPIC_NAMES", "MULTI_TOKEN_NAMES", "COLOURS", "ADJECTIVES", "PLACE_ADJECTIVES",
    "PREPOSITIONS",
    "CATEGORIES", "NOUN_NUMBER", "VERB_NUMBER", "HYPERNYMS", "multi_token_names", "article",
]


@dataclass(frozen=True)
class Topic:
    """One topic's vocabulary. Pairs are (singular, plural); verbs are (3rd singular, plural)."""

    name: str
    subjects: tuple[tuple[str, str], ...]            # who does things: ("dog", "dogs")
    intransitive: tuple[tuple[str, str], ...]        # verbs that stand alone: ("runs", "run")
    transitive: tuple[tuple[str, str, tuple[str, ...]], ...]  # ("eats", "eat", objects)
    places: tuple[tuple[str, str], ...]              # nouns of the distractor phrase: ("tree", "trees")
    hypernym: str                                    # what every subject is: "animal"
    about: tuple[str, ...]                           # what a document's opening sentence names


TOPICS: dict[str, Topic] = {t.name: t for t in (
    Topic("animals",
          subjects=(("dog", "dogs"), ("cat", "cats"), ("bird", "birds"), ("horse", "horses"),
                    ("cow", "cows"), ("fox", "foxes"), ("rabbit", "rabbits"), ("wolf", "wolves")),
          intransitive=(("runs", "run"), ("sleeps", "sleep"), ("jumps", "jump"), ("hides", "hide")),
          transitive=(("eats", "eat", ("grass", "meat", "seeds", "fish")),
                      ("chases", "chase", ("the ball", "the mice")),
                      ("drinks", "drink", ("water", "milk"))),
          places=(("tree", "trees"), ("fence", "fences"), ("barn", "barns"), ("river", "rivers"),
                  ("field", "fields")),
          hypernym="animal", about=("animals", "the farm", "the forest")),
    Topic("cities",
          subjects=(("tourist", "tourists"), ("driver", "drivers"), ("student", "students"),
                    ("visitor", "visitors"), ("guide", "guides")),
          intransitive=(("waits", "wait"), ("walks", "walk"), ("arrives", "arrive"), ("stays", "stay")),
          transitive=(("visits", "visit", ("the museum", "the market", "the old town")),
                      ("takes", "take", ("the bus", "the subway", "a taxi")),
                      ("photographs", "photograph", ("the skyline", "the square"))),
          places=(("station", "stations"), ("bridge", "bridges"), ("tower", "towers"),
                  ("street", "streets"), ("hotel", "hotels")),
          hypernym="person", about=("the city", "travel", "the streets")),
    Topic("food",
          subjects=(("chef", "chefs"), ("baker", "bakers"), ("waiter", "waiters"),
                    ("farmer", "farmers"), ("guest", "guests")),
          intransitive=(("smiles", "smile"), ("works", "work"), ("hurries", "hurry"), ("sits", "sit")),
          transitive=(("bakes", "bake", ("bread", "a cake", "the pies")),
                      ("serves", "serve", ("soup", "rice", "pasta")),
                      ("slices", "slice", ("the cheese", "the apples")),
                      ("tastes", "taste", ("the sauce", "the soup"))),
          places=(("kitchen", "kitchens"), ("oven", "ovens"), ("table", "tables"),
                  ("counter", "counters"), ("shop", "shops")),
          hypernym="person", about=("food", "the kitchen", "dinner")),
    Topic("sport",
          subjects=(("player", "players"), ("runner", "runners"), ("swimmer", "swimmers"),
                    ("skier", "skiers"), ("boxer", "boxers")),
          intransitive=(("wins", "win"), ("loses", "lose"), ("rests", "rest"), ("cheers", "cheer")),
          transitive=(("plays", "play", ("the game", "the match", "tennis")),
                      ("kicks", "kick", ("the ball",)),
                      ("watches", "watch", ("the race", "the final"))),
          places=(("goal", "goals"), ("net", "nets"), ("stadium", "stadiums"), ("track", "tracks"),
                  ("pool", "pools")),
          hypernym="athlete", about=("sport", "the game", "the season")),
    Topic("music",
          subjects=(("singer", "singers"), ("drummer", "drummers"), ("pianist", "pianists"),
                    ("violinist", "violinists"), ("guitarist", "guitarists")),
          intransitive=(("sings", "sing"), ("dances", "dance"), ("bows", "bow"), ("listens", "listen")),
          transitive=(("performs", "perform", ("a song", "the concert")),
                      ("writes", "write", ("a song", "the music")),
                      ("hums", "hum", ("a melody", "the chorus"))),
          places=(("stage", "stages"), ("speaker", "speakers"), ("microphone", "microphones"),
                  ("curtain", "curtains"), ("studio", "studios")),
          hypernym="musician", about=("music", "the concert", "the band")),
)}
TOPIC_NAMES: tuple[str, ...] = tuple(TOPICS)

# Each name is one unit in the text; first words are shared so the second word is a joint choice.
MULTI_TOKEN_NAMES: tuple[str, ...] = (
    "new york", "new delhi", "new orleans", "los angeles", "las vegas", "san francisco",
    "san diego", "hong kong", "buenos aires", "rio de janeiro",
)

COLOURS: tuple[str, ...] = ("red", "blue", "green", "brown", "white", "black")
ADJECTIVES: tuple[str, ...] = COLOURS + ("small", "big", "old", "young", "quiet", "happy")
PLACE_ADJECTIVES: tuple[str, ...] = COLOURS + ("small", "big", "old")  # nothing "happy" about a bridge
PREPOSITIONS: tuple[str, ...] = ("near", "behind", "beside", "next to")

# Word categories for the static-vector evaluation: same-category words fill the same slots.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "animal": tuple(sg for sg, _ in TOPICS["animals"].subjects),
    "traveller": tuple(sg for sg, _ in TOPICS["cities"].subjects),
    "athlete": tuple(sg for sg, _ in TOPICS["sport"].subjects),
    "musician": tuple(sg for sg, _ in TOPICS["music"].subjects),
    "city place": tuple(sg for sg, _ in TOPICS["cities"].places),
    "food": ("bread", "soup", "rice", "pasta", "cheese", "sauce"),
    "colour": COLOURS,
}

# Number of every subject/place noun and every verb form: "sg" or "pl".
NOUN_NUMBER: dict[str, str] = {}
VERB_NUMBER: dict[str, str] = {}
HYPERNYMS: dict[str, str] = {}  # singular subject noun -> its hypernym ("dog" -> "animal")
for _t in TOPICS.values():
    for _sg, _pl in _t.subjects + _t.places:
        NOUN_NUMBER[_sg], NOUN_NUMBER[_pl] = "sg", "pl"
    for _sg, _pl, *_ in _t.intransitive + _t.transitive:
        VERB_NUMBER[_sg], VERB_NUMBER[_pl] = "sg", "pl"
    for _sg, _ in _t.subjects:
        HYPERNYMS[_sg] = _t.hypernym
assert not set(NOUN_NUMBER) & set(VERB_NUMBER), "a word is both a noun and a verb"


def multi_token_names() -> list[str]:
    """The multi-token names, each a space-separated unit: ["new york", "new delhi", ...]."""
    return list(MULTI_TOKEN_NAMES)


def article(word: str) -> str:
    """`a` or `an` before ``word`` (by its first letter, which is right for this vocabulary)."""
    return "an" if word[0] in "aeiou" else "a"
