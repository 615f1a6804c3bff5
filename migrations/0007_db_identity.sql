-- 0007_db_identity: a random identity per database, in the path of its
-- runs' directories (runs/<identity>/<run id>/, docs/ARCHITECTURE.md
-- "Record log"): a database deleted and created again numbers its runs
-- from 1 once more, and must never append to, or ingest, the files an
-- older database's run of the same id left. A database that already has
-- runs keeps the directories it has (runs/<run id>/: identity '').
CREATE TABLE db_identity (
    id TEXT NOT NULL
);
INSERT INTO db_identity (id)
SELECT CASE WHEN EXISTS (SELECT 1 FROM runs) THEN '' ELSE lower(hex(randomblob(8))) END;
