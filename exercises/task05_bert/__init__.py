"""Task module 5: BERT (WordPiece, MLM masking and loss, NSP pairs, classification on h[CLS])."""
