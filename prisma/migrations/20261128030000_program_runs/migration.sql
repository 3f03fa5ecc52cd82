-- Every execution of a plugin's program by a step (ctx.exec): one row per (session, message number,
-- program, call index within the step), so a step run again after a worker died reuses the result.
CREATE TABLE "ProgramRun" (
    "id" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "program" TEXT NOT NULL,
    "callIndex" INTEGER NOT NULL,
    "input" JSONB NOT NULL,
    "output" JSONB,
    "exitStatus" INTEGER,
    "limitsHit" TEXT,
    "error" TEXT,
    "interrupted" BOOLEAN NOT NULL DEFAULT false,
    "attempts" INTEGER NOT NULL DEFAULT 1,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "durationMs" INTEGER,

    CONSTRAINT "ProgramRun_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "ProgramRun_sessionId_seq_program_callIndex_key" ON "ProgramRun"("sessionId", "seq", "program", "callIndex");

ALTER TABLE "ProgramRun" ADD CONSTRAINT "ProgramRun_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "ProtocolSession"("id") ON DELETE CASCADE ON UPDATE CASCADE;
