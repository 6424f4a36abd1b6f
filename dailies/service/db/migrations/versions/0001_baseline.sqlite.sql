CREATE TRIGGER IF NOT EXISTS dailies_task_counts_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO task_counts (project, service_tier, hour, status, endpoint, n)
    VALUES (NEW.project, NEW.service_tier, NEW.created_at / 3600 * 3600, NEW.status, NEW.endpoint, 1)
    ON CONFLICT (project, service_tier, hour, status, endpoint) DO UPDATE SET n = n + (1); END
;

CREATE TRIGGER IF NOT EXISTS dailies_task_counts_delete AFTER DELETE ON tasks BEGIN
    INSERT INTO task_counts (project, service_tier, hour, status, endpoint, n)
    VALUES (OLD.project, OLD.service_tier, OLD.created_at / 3600 * 3600, OLD.status, OLD.endpoint, -1)
    ON CONFLICT (project, service_tier, hour, status, endpoint) DO UPDATE SET n = n + (-1); END
;

CREATE TRIGGER IF NOT EXISTS dailies_task_counts_update
    AFTER UPDATE OF status, project, service_tier, endpoint, created_at ON tasks
    WHEN OLD.status IS NOT NEW.status OR OLD.project IS NOT NEW.project
    OR OLD.service_tier IS NOT NEW.service_tier OR OLD.endpoint IS NOT NEW.endpoint
    OR OLD.created_at / 3600 IS NOT NEW.created_at / 3600 BEGIN
    INSERT INTO task_counts (project, service_tier, hour, status, endpoint, n)
    VALUES (OLD.project, OLD.service_tier, OLD.created_at / 3600 * 3600, OLD.status, OLD.endpoint, -1)
    ON CONFLICT (project, service_tier, hour, status, endpoint) DO UPDATE SET n = n + (-1);
    INSERT INTO task_counts (project, service_tier, hour, status, endpoint, n)
    VALUES (NEW.project, NEW.service_tier, NEW.created_at / 3600 * 3600, NEW.status, NEW.endpoint, 1)
    ON CONFLICT (project, service_tier, hour, status, endpoint) DO UPDATE SET n = n + (1); END
;
