{create_sequence}
;

CREATE TABLE {prefix}batches (
	scope VARCHAR DEFAULT '' NOT NULL,
	id VARCHAR NOT NULL,
	created_at {double} NOT NULL,
	label VARCHAR NOT NULL,
	mode VARCHAR NOT NULL,{seq_column}
	PRIMARY KEY (id)
)
;

CREATE TABLE {prefix}submissions (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	batch_id VARCHAR,
	submitted_at {double} NOT NULL,
	base_url VARCHAR NOT NULL,
	model VARCHAR NOT NULL,
	mode VARCHAR NOT NULL,
	prompt TEXT NOT NULL,
	request TEXT NOT NULL,
	inputs TEXT NOT NULL,{seq_column}
	PRIMARY KEY (scope, task_id)
)
;

CREATE INDEX ix_{prefix}submissions_batch ON {prefix}submissions (batch_id)
;

CREATE INDEX ix_{prefix}submissions_time ON {prefix}submissions (submitted_at)
;

CREATE TABLE {prefix}reviews (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	verdict VARCHAR,
	stars INTEGER,
	notes TEXT DEFAULT '' NOT NULL,
	updated_at {double} NOT NULL,{seq_column}
	PRIMARY KEY (scope, task_id)
)
;

CREATE TABLE {prefix}kept (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	name VARCHAR NOT NULL,
	path TEXT NOT NULL,
	size BIGINT NOT NULL,
	kept_at {double} NOT NULL,{seq_column}
	PRIMARY KEY (scope, task_id, name)
)
;

CREATE TABLE {prefix}records (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	record TEXT NOT NULL,
	saved_at {double} NOT NULL,{seq_column}
	PRIMARY KEY (scope, task_id)
)
;

CREATE TABLE {prefix}preferences (
	scope VARCHAR DEFAULT '' NOT NULL,
	name VARCHAR NOT NULL,
	value TEXT NOT NULL,{seq_column}
	PRIMARY KEY (scope, name)
)
;

CREATE TABLE {prefix}statuses (
	scope VARCHAR DEFAULT '' NOT NULL,
	id VARCHAR NOT NULL,
	task_id VARCHAR NOT NULL,
	status VARCHAR NOT NULL,
	author VARCHAR NOT NULL,
	previous VARCHAR,
	at {double} NOT NULL,{seq_column}
	PRIMARY KEY (scope, id)
)
;

CREATE INDEX ix_{prefix}statuses_task ON {prefix}statuses (task_id)
;

CREATE TABLE {prefix}ratings (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	author VARCHAR NOT NULL,
	stars INTEGER NOT NULL,
	at {double} NOT NULL,{seq_column}
	PRIMARY KEY (scope, task_id, author)
)
;

CREATE TABLE {prefix}comments (
	scope VARCHAR DEFAULT '' NOT NULL,
	id VARCHAR NOT NULL,
	task_id VARCHAR NOT NULL,
	parent_id VARCHAR,
	author VARCHAR NOT NULL,
	body TEXT NOT NULL,
	timecode {double},
	created_at {double} NOT NULL,
	resolved_at {double},
	resolved_by VARCHAR,{seq_column}
	PRIMARY KEY (scope, id)
)
;

CREATE INDEX ix_{prefix}comments_task ON {prefix}comments (task_id)
;

CREATE TABLE {prefix}authors (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	author VARCHAR NOT NULL,
	at {double} NOT NULL,{seq_column}
	PRIMARY KEY (scope, task_id)
)
;

CREATE TABLE {prefix}shots (
	scope VARCHAR DEFAULT '' NOT NULL,
	task_id VARCHAR NOT NULL,
	shot_id VARCHAR NOT NULL,
	parent_id VARCHAR,
	how VARCHAR NOT NULL,
	created_at {double} NOT NULL,{seq_column}
	PRIMARY KEY (scope, task_id)
)
;

CREATE INDEX ix_{prefix}shots_shot ON {prefix}shots (shot_id)
;

CREATE TABLE {prefix}shares (
	scope VARCHAR DEFAULT '' NOT NULL,
	id VARCHAR NOT NULL,
	token_hash VARCHAR NOT NULL,
	scope_base_url VARCHAR NOT NULL,
	scope_key VARCHAR NOT NULL,
	task_ids TEXT NOT NULL,
	prompts TEXT NOT NULL,
	created_by VARCHAR NOT NULL,
	created_at {double} NOT NULL,
	expires_at {double} NOT NULL,
	passphrase VARCHAR,
	allow_comments INTEGER NOT NULL,
	allow_status INTEGER NOT NULL,
	hide_prompt INTEGER NOT NULL,
	revoked_at {double},
	failed_attempts INTEGER NOT NULL,
	locked_until {double},{seq_column}
	PRIMARY KEY (id)
)
;

CREATE INDEX ix_{prefix}shares_token ON {prefix}shares (token_hash)
;

{mark_version}
