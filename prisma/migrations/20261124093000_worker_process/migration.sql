-- CreateTable
CREATE TABLE "WorkerProcess" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "startedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "seenAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "jobs" JSONB NOT NULL DEFAULT '[]',
    "draining" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "WorkerProcess_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "WorkerProcess_seenAt_idx" ON "WorkerProcess"("seenAt");
