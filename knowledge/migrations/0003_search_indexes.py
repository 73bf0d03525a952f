"""Search support: a per-bot lexicon of the 'russian' full-text lexemes with their document
frequencies, and trigram indexes for typo tolerance.

`knowledge_lexeme` is written only by knowledge.indexing.lexicon_refresh (after each embedding
pass) and read only by knowledge.search. It gives the hybrid search two things the GIN index on
entries cannot give cheaply: how rare a query word is in this bot's texts (IDF, so "ИНН" counts
for more than "компания"), and the nearest real word for a misspelt one ("вазврат" -> "возврат"),
through the trigram index on the lexeme. Row lexeme = '' holds the number of active entries.
It has no Django model on purpose: it is derived data, rebuilt from entries, never edited.
"""

from django.db import migrations

CREATE = """
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE IF NOT EXISTS knowledge_lexeme (
    bot_id bigint NOT NULL REFERENCES bots_bot (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    lexeme text NOT NULL,
    df integer NOT NULL,
    PRIMARY KEY (bot_id, lexeme)
);
CREATE INDEX IF NOT EXISTS knowledge_lexeme_trgm ON knowledge_lexeme USING gin (lexeme gin_trgm_ops);
CREATE INDEX IF NOT EXISTS entry_title_trgm ON knowledge_entry USING gin (title gin_trgm_ops);
"""

DROP = """
DROP INDEX IF EXISTS entry_title_trgm;
DROP TABLE IF EXISTS knowledge_lexeme;
"""


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0002_vector_indexes"), ("bots", "0001_initial")]

    operations = [migrations.RunSQL(CREATE, DROP)]
