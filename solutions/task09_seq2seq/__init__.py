"""Task module 9: T5 and BART (span corruption, encoder-decoder, noising)."""
