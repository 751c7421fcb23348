PRAGMA defer_foreign_keys=TRUE;
CREATE TABLE d1_migrations(
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		name       TEXT UNIQUE,
		applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
);
INSERT INTO "d1_migrations" VALUES(1,'0001_init.sql','2026-11-29 21:46:44');
CREATE TABLE users(id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL UNIQUE, name TEXT, score REAL, avatar BLOB);
INSERT INTO "users" VALUES(1,'ann@example.com','Ann',3.5,X'89504e47');
INSERT INTO "users" VALUES(2,'bob@example.com','Bob ''the builder''; of -- things',NULL,X'');
INSERT INTO "users" VALUES(3,'cy@example.com',NULL,-1.25e+100,NULL);
CREATE TABLE posts(id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), title TEXT, body TEXT);
INSERT INTO "posts" VALUES(1,2,'first','line one
line two; with a semicolon /* not a comment */');
INSERT INTO "posts" VALUES(2,1,'second','BEGIN and END inside a string');
CREATE TABLE audit(id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT);
DELETE FROM sqlite_sequence;
INSERT INTO "sqlite_sequence" VALUES('d1_migrations',1);
INSERT INTO "sqlite_sequence" VALUES('users',3);
INSERT INTO "sqlite_sequence" VALUES('audit',40);
CREATE INDEX idx_posts_user ON posts(user_id);
CREATE TRIGGER users_audit AFTER INSERT ON users BEGIN INSERT INTO audit (what) VALUES ('user ' || NEW.email); END;
CREATE VIEW v_users AS SELECT email FROM users;