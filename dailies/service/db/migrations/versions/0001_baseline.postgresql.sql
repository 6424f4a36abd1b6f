ALTER TABLE task_counts SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000, autovacuum_analyze_scale_factor = 0.05)
;

CREATE OR REPLACE FUNCTION dailies_bump_task_count(p text, t text, h bigint, s text, e text, d integer)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO task_counts AS c (project, service_tier, hour, status, endpoint, n) VALUES (p, t, h, s, e, d)
    ON CONFLICT (project, service_tier, hour, status, endpoint) DO UPDATE SET n = c.n + EXCLUDED.n
$$
;

CREATE OR REPLACE FUNCTION dailies_count_task() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    old_key record;
    new_key record;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        old_key := (OLD.project, OLD.service_tier, OLD.created_at / 3600 * 3600, OLD.status, OLD.endpoint);
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        new_key := (NEW.project, NEW.service_tier, NEW.created_at / 3600 * 3600, NEW.status, NEW.endpoint);
    END IF;
    IF TG_OP = 'INSERT' THEN
        PERFORM dailies_bump_task_count(NEW.project, NEW.service_tier, NEW.created_at / 3600 * 3600,
                                        NEW.status, NEW.endpoint, 1);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM dailies_bump_task_count(OLD.project, OLD.service_tier, OLD.created_at / 3600 * 3600,
                                        OLD.status, OLD.endpoint, -1);
    ELSIF old_key::text IS DISTINCT FROM new_key::text THEN
        IF old_key::text < new_key::text THEN
            PERFORM dailies_bump_task_count(OLD.project, OLD.service_tier, OLD.created_at / 3600 * 3600,
                                            OLD.status, OLD.endpoint, -1);
            PERFORM dailies_bump_task_count(NEW.project, NEW.service_tier, NEW.created_at / 3600 * 3600,
                                            NEW.status, NEW.endpoint, 1);
        ELSE
            PERFORM dailies_bump_task_count(NEW.project, NEW.service_tier, NEW.created_at / 3600 * 3600,
                                            NEW.status, NEW.endpoint, 1);
            PERFORM dailies_bump_task_count(OLD.project, OLD.service_tier, OLD.created_at / 3600 * 3600,
                                            OLD.status, OLD.endpoint, -1);
        END IF;
    END IF;
    RETURN NULL;
END
$$
;

CREATE TRIGGER dailies_task_counts
AFTER INSERT OR DELETE OR UPDATE OF status, project, service_tier, endpoint, created_at ON tasks
FOR EACH ROW EXECUTE FUNCTION dailies_count_task()
;
