-- The step queue before the engine was named 'pxp-step'; workers no longer drain it. Its unfinished
-- jobs (queued, waiting to retry, or held by a worker that died) move to 'session-step', which takes the
-- same payload ({sessionId, experimentId}; the old `protocol` key is ignored), and the old queue goes.
-- Nothing happens on a database whose job queue was never started or never had the old queue.
DO $$
BEGIN
  -- (two statements: one condition naming pgboss.queue fails on a database without it, whatever its OR)
  IF to_regclass('pgboss.queue') IS NULL THEN
    RETURN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pgboss.queue WHERE name = 'pxp-step') THEN
    RETURN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pgboss.queue WHERE name = 'session-step') THEN
    PERFORM pgboss.create_queue('session-step', '{"policy":"standard"}'::json);
  END IF;
  UPDATE pgboss.job SET name = 'session-step', state = 'created', started_on = NULL
  WHERE name = 'pxp-step' AND state IN ('created', 'retry', 'active');
  -- Its history (completed, failed, cancelled jobs) goes with it: the queue's row cannot be deleted
  -- while jobs still name it.
  DELETE FROM pgboss.job WHERE name = 'pxp-step';
  PERFORM pgboss.delete_queue('pxp-step');
END $$;
