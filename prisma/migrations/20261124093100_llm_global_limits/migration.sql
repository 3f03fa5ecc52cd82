-- CreateTable
CREATE TABLE "LlmLimitState" (
    "connectionId" TEXT NOT NULL,
    "requests" DOUBLE PRECISION NOT NULL,
    "tokens" DOUBLE PRECISION NOT NULL,
    "refilledAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "pausedUntil" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "LlmLimitState_pkey" PRIMARY KEY ("connectionId")
);

-- CreateTable
CREATE TABLE "LlmLease" (
    "id" UUID NOT NULL,
    "connectionId" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "LlmLease_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "LlmLease_connectionId_expiresAt_idx" ON "LlmLease"("connectionId", "expiresAt");

-- Admission of one LLM call against a connection's global limits, in one short statement (the row
-- lock is held for microseconds, never during the call). Returns 0 when admitted (the lease is
-- written and the buckets charged), -1 when every concurrency slot is leased (poll again), or the
-- milliseconds to wait for the request/token buckets or for a pause after a 429 to end.
-- p_rpm / p_tpm <= 0 mean unlimited; p_burst is how many seconds of budget one burst may spend.
CREATE OR REPLACE FUNCTION parley_llm_acquire(
  p_conn text, p_max integer, p_rpm double precision, p_tpm double precision, p_burst double precision,
  p_estimate double precision, p_lease uuid, p_lease_ms double precision
) RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz := clock_timestamp();
  st "LlmLimitState"%ROWTYPE;
  req_cap double precision := CASE WHEN p_rpm > 0 THEN greatest(1, p_rpm / 60 * p_burst) END;
  tok_cap double precision := CASE WHEN p_tpm > 0 THEN greatest(1, p_tpm / 60 * p_burst) END;
  elapsed_ms double precision;
  reqs double precision := 0;
  toks double precision := 0;
  need double precision;
  wait double precision := 0;
  held integer;
BEGIN
  INSERT INTO "LlmLimitState" ("connectionId", requests, tokens, "refilledAt", "pausedUntil")
  VALUES (p_conn, coalesce(req_cap, 0), coalesce(tok_cap, 0), t, t)
  ON CONFLICT ("connectionId") DO NOTHING;
  SELECT * INTO st FROM "LlmLimitState" WHERE "connectionId" = p_conn FOR UPDATE;
  IF st."pausedUntil" > t THEN
    RETURN extract(epoch FROM st."pausedUntil" - t) * 1000;
  END IF;
  DELETE FROM "LlmLease" WHERE "connectionId" = p_conn AND "expiresAt" < t;
  SELECT count(*) INTO held FROM "LlmLease" WHERE "connectionId" = p_conn;
  IF held >= p_max THEN
    RETURN -1;
  END IF;
  elapsed_ms := greatest(0, extract(epoch FROM t - st."refilledAt") * 1000);
  IF req_cap IS NOT NULL THEN
    reqs := least(req_cap, st.requests + elapsed_ms * p_rpm / 60000);
    IF reqs < 1 THEN wait := greatest(wait, (1 - reqs) / (p_rpm / 60000)); END IF;
  END IF;
  IF tok_cap IS NOT NULL THEN
    toks := least(tok_cap, st.tokens + elapsed_ms * p_tpm / 60000);
    need := least(p_estimate, tok_cap);
    IF toks < need THEN wait := greatest(wait, (need - toks) / (p_tpm / 60000)); END IF;
  END IF;
  IF wait > 0 THEN
    UPDATE "LlmLimitState" SET requests = reqs, tokens = toks, "refilledAt" = t WHERE "connectionId" = p_conn;
    RETURN wait;
  END IF;
  UPDATE "LlmLimitState"
  SET requests = CASE WHEN req_cap IS NULL THEN 0 ELSE reqs - 1 END,
      tokens = CASE WHEN tok_cap IS NULL THEN 0 ELSE toks - p_estimate END,
      "refilledAt" = t
  WHERE "connectionId" = p_conn;
  INSERT INTO "LlmLease" (id, "connectionId", "expiresAt") VALUES (p_lease, p_conn, t + p_lease_ms * interval '1 millisecond');
  RETURN 0;
END
$$;
