CREATE SEQUENCE journal_writes
;

CREATE TABLE journal_batches (
	scope VARCHAR DEFAULT '' NOT NULL,
	id VARCHAR NOT NULL,
	created_at DOUBLE PRECISION NOT NULL,
	label VARCHAR NOT NULL,
	mode VARCHAR NOT NULL,
	seq BIGINT DEFAULT nextval('journal_writes') NOT NULL,
	PRIMARY KEY (id)
)
;

CREATE TABLE journal_submissions (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	batch_id VARCHAR,
	submitted_at DOUBLE PRECISION NOT NULL,
	base_url VARCHAR NOT NULL,
	model VARCHAR NOT NULL,
	mode VARCHAR NOT NULL,
	prompt TEXT NOT NULL,
	request TEXT NOT NULL,
	inputs TEXT NOT NULL,
	seq BIGINT DEFAULT nextval('journal_writes') NOT NULL,
	PRIMARY KEY (scope, task_id)
)
;

CREATE INDEX ix_journal_submissions_batch ON journal_submissions (batch_id)
;

CREATE INDEX ix_journal_submissions_time ON journal_submissions (submitted_at)
;

CREATE TABLE journal_reviews (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	verdict VARCHAR,
	stars INTEGER,
	notes TEXT DEFAULT '' NOT NULL,
	updated_at DOUBLE PRECISION NOT NULL,
	seq BIGINT DEFAULT nextval('journal_writes') NOT NULL,
	PRIMARY KEY (scope, task_id)
)
;

CREATE TABLE journal_kept (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	name VARCHAR NOT NULL,
	path TEXT NOT NULL,
	size BIGINT NOT NULL,
	kept_at DOUBLE PRECISION NOT NULL,
	seq BIGINT DEFAULT nextval('journal_writes') NOT NULL,
	PRIMARY KEY (scope, task_id, name)
)
;

CREATE TABLE journal_records (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	record TEXT NOT NULL,
	saved_at DOUBLE PRECISION NOT NULL,
	seq BIGINT DEFAULT nextval('journal_writes') NOT NULL,
	PRIMARY KEY (scope, task_id)
)
;

CREATE TABLE journal_preferences (
	scope VARCHAR DEFAULT '' NOT NULL,
	name VARCHAR NOT NULL,
	value TEXT NOT NULL,
	seq BIGINT DEFAULT nextval('journal_writes') NOT NULL,
	PRIMARY KEY (scope, name)
)
;

CREATE TABLE journal_statuses (
	scope VARCHAR DEFAULT '' NOT NULL,
	id VARCHAR NOT NULL,
	task_id VARCHAR NOT NULL,
	status VARCHAR NOT NULL,
	author VARCHAR NOT NULL,
	previous VARCHAR,
	at DOUBLE PRECISION NOT NULL,
	seq BIGINT DEFAULT nextval('journal_writes') NOT NULL,
	PRIMARY KEY (scope, id)
)
;

CREATE INDEX ix_journal_statuses_task ON journal_statuses (task_id)
;

CREATE TABLE journal_ratings (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	author VARCHAR NOT NULL,
	stars INTEGER NOT NULL,
	at DOUBLE PRECISION NOT NULL,
	seq BIGINT DEFAULT nextval('journal_writes') NOT NULL,
	PRIMARY KEY (scope, task_id, author)
)
;

CREATE TABLE journal_comments (
	scope VARCHAR DEFAULT '' NOT NULL,
	id VARCHAR NOT NULL,
	task_id VARCHAR NOT NULL,
	parent_id VARCHAR,
	author VARCHAR NOT NULL,
	body TEXT NOT NULL,
	timecode DOUBLE PRECISION,
	created_at DOUBLE PRECISION NOT NULL,
	resolved_at DOUBLE PRECISION,
	resolved_by VARCHAR,
	seq BIGINT DEFAULT nextval('journal_writes') NOT NULL,
	PRIMARY KEY (scope, id)
)
;

CREATE INDEX ix_journal_comments_task ON journal_comments (task_id)
;

CREATE TABLE journal_authors (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	author VARCHAR NOT NULL,
	at DOUBLE PRECISION NOT NULL,
	seq BIGINT DEFAULT nextval('journal_writes') NOT NULL,
	PRIMARY KEY (scope, task_id)
)
;

CREATE TABLE journal_shots (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	shot_id VARCHAR NOT NULL,
	parent_id VARCHAR,
	how VARCHAR NOT NULL,
	created_at DOUBLE PRECISION NOT NULL,
	seq BIGINT DEFAULT nextval('journal_writes') NOT NULL,
	PRIMARY KEY (scope, task_id)
)
;

CREATE INDEX ix_journal_shots_shot ON journal_shots (shot_id)
;

CREATE TABLE journal_shares (
	scope VARCHAR DEFAULT '' NOT NULL,
	id VARCHAR NOT NULL,
	token_hash VARCHAR NOT NULL,
	scope_base_url VARCHAR NOT NULL,
	scope_key VARCHAR NOT NULL,
	task_ids TEXT NOT NULL,
	prompts TEXT NOT NULL,
	created_by VARCHAR NOT NULL,
	created_at DOUBLE PRECISION NOT NULL,
	expires_at DOUBLE PRECISION NOT NULL,
	passphrase VARCHAR,
	allow_comments INTEGER NOT NULL,
	allow_status INTEGER NOT NULL,
	hide_prompt INTEGER NOT NULL,
	revoked_at DOUBLE PRECISION,
	failed_attempts INTEGER NOT NULL,
	locked_until DOUBLE PRECISION,
	seq BIGINT DEFAULT nextval('journal_writes') NOT NULL,
	PRIMARY KEY (id)
)
;

CREATE INDEX ix_journal_shares_token ON journal_shares (token_hash)
;
