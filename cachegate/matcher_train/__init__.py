"""`cachegate train matcher`: the semantic tier's matcher (retrieval projection, verifier, calibrated decision)
trained from the development data and written as small files applied to the packaged MiniLM."""
