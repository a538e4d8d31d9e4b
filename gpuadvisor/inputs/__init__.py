"""Reading what people give us: size-limited text, TOML/JSON with line numbers, the
profile, the catalog, the worked examples, validation messages and the per-user cache of
parsed bundled files. Nothing here decides anything."""
