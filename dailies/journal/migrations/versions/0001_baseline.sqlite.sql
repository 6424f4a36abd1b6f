CREATE TABLE batches (
	scope VARCHAR DEFAULT '' NOT NULL,
	id VARCHAR NOT NULL,
	created_at DOUBLE NOT NULL,
	label VARCHAR NOT NULL,
	mode VARCHAR NOT NULL,
	PRIMARY KEY (id)
)
;

CREATE TABLE submissions (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	batch_id VARCHAR,
	submitted_at DOUBLE NOT NULL,
	base_url VARCHAR NOT NULL,
	model VARCHAR NOT NULL,
	mode VARCHAR NOT NULL,
	prompt TEXT NOT NULL,
	request TEXT NOT NULL,
	inputs TEXT NOT NULL,
	PRIMARY KEY (scope, task_id)
)
;

CREATE INDEX ix_submissions_batch ON submissions (batch_id)
;

CREATE INDEX ix_submissions_time ON submissions (submitted_at)
;

CREATE TABLE reviews (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	verdict VARCHAR,
	stars INTEGER,
	notes TEXT DEFAULT '' NOT NULL,
	updated_at DOUBLE NOT NULL,
	PRIMARY KEY (scope, task_id)
)
;

CREATE TABLE kept (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	name VARCHAR NOT NULL,
	path TEXT NOT NULL,
	size BIGINT NOT NULL,
	kept_at DOUBLE NOT NULL,
	PRIMARY KEY (scope, task_id, name)
)
;

CREATE TABLE records (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	record TEXT NOT NULL,
	saved_at DOUBLE NOT NULL,
	PRIMARY KEY (scope, task_id)
)
;

CREATE TABLE preferences (
	scope VARCHAR DEFAULT '' NOT NULL,
	name VARCHAR NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (scope, name)
)
;

CREATE TABLE statuses (
	scope VARCHAR DEFAULT '' NOT NULL,
	id VARCHAR NOT NULL,
	task_id VARCHAR NOT NULL,
	status VARCHAR NOT NULL,
	author VARCHAR NOT NULL,
	previous VARCHAR,
	at DOUBLE NOT NULL,
	PRIMARY KEY (scope, id)
)
;

CREATE INDEX ix_statuses_task ON statuses (task_id)
;

CREATE TABLE ratings (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	author VARCHAR NOT NULL,
	stars INTEGER NOT NULL,
	at DOUBLE NOT NULL,
	PRIMARY KEY (scope, task_id, author)
)
;

CREATE TABLE comments (
	scope VARCHAR DEFAULT '' NOT NULL,
	id VARCHAR NOT NULL,
	task_id VARCHAR NOT NULL,
	parent_id VARCHAR,
	author VARCHAR NOT NULL,
	body TEXT NOT NULL,
	timecode DOUBLE,
	created_at DOUBLE NOT NULL,
	resolved_at DOUBLE,
	resolved_by VARCHAR,
	PRIMARY KEY (scope, id)
)
;

CREATE INDEX ix_comments_task ON comments (task_id)
;

CREATE TABLE authors (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	author VARCHAR NOT NULL,
	at DOUBLE NOT NULL,
	PRIMARY KEY (scope, task_id)
)
;

CREATE TABLE shots (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	shot_id VARCHAR NOT NULL,
	parent_id VARCHAR,
	how VARCHAR NOT NULL,
	created_at DOUBLE NOT NULL,
	PRIMARY KEY (scope, task_id)
)
;

CREATE INDEX ix_shots_shot ON shots (shot_id)
;

CREATE TABLE shares (
	scope VARCHAR DEFAULT '' NOT NULL,
	id VARCHAR NOT NULL,
	token_hash VARCHAR NOT NULL,
	scope_base_url VARCHAR NOT NULL,
	scope_key VARCHAR NOT NULL,
	task_ids TEXT NOT NULL,
	prompts TEXT NOT NULL,
	created_by VARCHAR NOT NULL,
	created_at DOUBLE NOT NULL,
	expires_at DOUBLE NOT NULL,
	passphrase VARCHAR,
	allow_comments INTEGER NOT NULL,
	allow_status INTEGER NOT NULL,
	hide_prompt INTEGER NOT NULL,
	revoked_at DOUBLE,
	failed_attempts INTEGER NOT NULL,
	locked_until DOUBLE,
	PRIMARY KEY (id)
)
;

CREATE INDEX ix_shares_token ON shares (token_hash)
;

PRAGMA user_version = 1
;
