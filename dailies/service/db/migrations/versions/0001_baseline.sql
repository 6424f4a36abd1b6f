CREATE TABLE api_keys (
	key_sha256 VARCHAR NOT NULL,
	project VARCHAR NOT NULL,
	masked VARCHAR NOT NULL,
	created_at BIGINT NOT NULL,
	name VARCHAR,
	rpm INTEGER,
	read_rpm INTEGER,
	PRIMARY KEY (key_sha256)
)
;

CREATE TABLE budgets (
	project VARCHAR NOT NULL,
	member VARCHAR NOT NULL,
	period VARCHAR NOT NULL,
	currency VARCHAR NOT NULL,
	amount BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	PRIMARY KEY (project, member)
)
;

CREATE TABLE callback_attempts (
	seq {serial} NOT NULL,
	webhook_id VARCHAR NOT NULL,
	task_id VARCHAR NOT NULL,
	status VARCHAR NOT NULL,
	attempt INTEGER NOT NULL,
	at FLOAT NOT NULL,
	status_code INTEGER,
	latency_ms FLOAT,
	error TEXT,
	PRIMARY KEY (seq)
)
;

CREATE INDEX ix_callback_attempts_task ON callback_attempts (task_id, seq)
;

CREATE TABLE callback_events (
	seq {serial} NOT NULL,
	webhook_id VARCHAR NOT NULL,
	task_id VARCHAR NOT NULL,
	project VARCHAR NOT NULL,
	url VARCHAR NOT NULL,
	status VARCHAR NOT NULL,
	body TEXT NOT NULL,
	state VARCHAR NOT NULL,
	attempts INTEGER NOT NULL,
	max_attempts INTEGER NOT NULL,
	next_attempt_at FLOAT NOT NULL,
	created_at FLOAT NOT NULL,
	claimed_by VARCHAR,
	claimed_at FLOAT,
	PRIMARY KEY (seq),
	UNIQUE (webhook_id)
)
;

CREATE INDEX ix_callback_due ON callback_events (state, next_attempt_at)
;

CREATE INDEX ix_callback_task ON callback_events (task_id, seq)
;

CREATE TABLE files_to_delete (
	task_id VARCHAR NOT NULL,
	since BIGINT NOT NULL,
	PRIMARY KEY (task_id)
)
;

CREATE TABLE idempotency (
	project VARCHAR NOT NULL,
	{key} VARCHAR NOT NULL,
	body_hash VARCHAR NOT NULL,
	task_id VARCHAR NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (project, {key})
)
;

CREATE TABLE ledger (
	task_id VARCHAR NOT NULL,
	project VARCHAR NOT NULL,
	member VARCHAR NOT NULL,
	model VARCHAR NOT NULL,
	currency VARCHAR NOT NULL,
	amount BIGINT NOT NULL,
	tokens BIGINT NOT NULL,
	state VARCHAR NOT NULL,
	month INTEGER NOT NULL,
	created_at BIGINT NOT NULL,
	settled_at BIGINT,
	upstream_key VARCHAR,
	PRIMARY KEY (task_id)
)
;

CREATE INDEX ix_ledger_project ON ledger (project, month, state)
;

CREATE TABLE project_secrets (
	project VARCHAR NOT NULL,
	webhook_secret TEXT NOT NULL,
	PRIMARY KEY (project)
)
;

CREATE TABLE rate_windows (
	key_id VARCHAR NOT NULL,
	kind VARCHAR NOT NULL,
	{window} BIGINT NOT NULL,
	n INTEGER NOT NULL,
	PRIMARY KEY (key_id, kind, {window})
)
;

CREATE TABLE schema_version (
	name VARCHAR NOT NULL,
	fingerprint VARCHAR NOT NULL,
	installed_at BIGINT NOT NULL,
	PRIMARY KEY (name)
)
;

CREATE TABLE service_secrets (
	name VARCHAR NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (name)
)
;

CREATE TABLE shown_requests (
	task_id VARCHAR NOT NULL,
	answer TEXT NOT NULL,
	PRIMARY KEY (task_id)
)
;

CREATE TABLE tasks (
	seq {serial} NOT NULL,
	id VARCHAR NOT NULL,
	project VARCHAR NOT NULL,
	model VARCHAR NOT NULL,
	endpoint VARCHAR NOT NULL,
	status VARCHAR NOT NULL,
	service_tier VARCHAR NOT NULL,
	tier_rank INTEGER NOT NULL,
	priority INTEGER,
	request TEXT NOT NULL,
	seed BIGINT NOT NULL,
	draft BOOLEAN NOT NULL,
	draft_task_id VARCHAR,
	safety_identifier VARCHAR,
	callback_url VARCHAR,
	execution_expires_after INTEGER NOT NULL,
	deadline_at BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	started_at BIGINT,
	finished_at BIGINT,
	worker_id VARCHAR,
	heartbeat_at FLOAT,
	attempts INTEGER NOT NULL,
	error_code VARCHAR,
	error_message TEXT,
	result TEXT,
	video_file VARCHAR,
	last_frame_file VARCHAR,
	generator_state TEXT,
	PRIMARY KEY (seq),
	UNIQUE (id)
)
;

CREATE INDEX ix_tasks_created ON tasks (created_at)
;

CREATE INDEX ix_tasks_deadline ON tasks (status, deadline_at)
;

CREATE INDEX ix_tasks_list ON tasks (project, service_tier, created_at)
;

CREATE INDEX ix_tasks_list_endpoint ON tasks (project, service_tier, endpoint, created_at)
;

CREATE INDEX ix_tasks_list_status ON tasks (project, service_tier, status, created_at)
;

CREATE INDEX ix_tasks_project_status ON tasks (project, status)
;

CREATE INDEX ix_tasks_queue ON tasks (status, tier_rank, endpoint, created_at)
;

CREATE TABLE upstream_creates (
	seq {serial} NOT NULL,
	upstream_key VARCHAR NOT NULL,
	model VARCHAR NOT NULL,
	at FLOAT NOT NULL,
	PRIMARY KEY (seq)
)
;

CREATE INDEX ix_upstream_creates_pair ON upstream_creates (upstream_key, model, at)
;

CREATE TABLE upstream_keys (
	name VARCHAR NOT NULL,
	priority INTEGER NOT NULL,
	ciphertext TEXT NOT NULL,
	masked VARCHAR NOT NULL,
	created_at BIGINT NOT NULL,
	set_aside VARCHAR,
	PRIMARY KEY (name)
)
;

CREATE TABLE task_counts (
	project VARCHAR NOT NULL,
	service_tier VARCHAR NOT NULL,
	hour BIGINT NOT NULL,
	status VARCHAR NOT NULL,
	endpoint VARCHAR NOT NULL,
	n BIGINT NOT NULL,
	PRIMARY KEY (project, service_tier, hour, status, endpoint)
)
;
