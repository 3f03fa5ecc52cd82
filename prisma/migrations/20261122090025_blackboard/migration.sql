-- CreateTable
CREATE TABLE "ProtocolSession" (
    "id" TEXT NOT NULL,
    "studyId" TEXT NOT NULL,
    "experimentId" TEXT,
    "assigneeId" TEXT,
    "protocol" TEXT NOT NULL,
    "protocolVersion" TEXT NOT NULL,
    "config" JSONB NOT NULL,
    "task" TEXT NOT NULL,
    "instanceId" TEXT,
    "instance" JSONB NOT NULL,
    "seats" JSONB NOT NULL,
    "repetition" INTEGER NOT NULL DEFAULT 1,
    "position" INTEGER NOT NULL DEFAULT 0,
    "status" TEXT NOT NULL DEFAULT 'running',
    "stopReason" TEXT,
    "stallError" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "doneAt" TIMESTAMP(3),

    CONSTRAINT "ProtocolSession_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Experiment" (
    "id" TEXT NOT NULL,
    "studyId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "protocol" TEXT NOT NULL,
    "task" TEXT NOT NULL,
    "datasetId" TEXT NOT NULL,
    "config" JSONB NOT NULL,
    "seats" JSONB NOT NULL,
    "repetitions" INTEGER NOT NULL,
    "carryOver" BOOLEAN NOT NULL DEFAULT true,
    "status" TEXT NOT NULL DEFAULT 'draft',
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Experiment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ProtocolMessage" (
    "id" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "sender" TEXT NOT NULL,
    "receiver" TEXT NOT NULL,
    "tag" TEXT,
    "prediction" TEXT,
    "explanation" TEXT,
    "payload" JSONB NOT NULL DEFAULT '{}',
    "llmCallId" TEXT,
    "authorUserId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ProtocolMessage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ContextSnapshot" (
    "sessionId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "context" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ContextSnapshot_pkey" PRIMARY KEY ("sessionId","seq")
);

-- CreateIndex
CREATE INDEX "ProtocolSession_studyId_status_idx" ON "ProtocolSession"("studyId", "status");

-- CreateIndex
CREATE INDEX "ProtocolSession_experimentId_repetition_position_idx" ON "ProtocolSession"("experimentId", "repetition", "position");

-- CreateIndex
CREATE INDEX "ProtocolSession_assigneeId_status_idx" ON "ProtocolSession"("assigneeId", "status");

-- CreateIndex
CREATE INDEX "Experiment_studyId_idx" ON "Experiment"("studyId");

-- CreateIndex
CREATE UNIQUE INDEX "ProtocolMessage_sessionId_seq_key" ON "ProtocolMessage"("sessionId", "seq");

-- AddForeignKey
ALTER TABLE "ProtocolSession" ADD CONSTRAINT "ProtocolSession_studyId_fkey" FOREIGN KEY ("studyId") REFERENCES "Study"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ProtocolSession" ADD CONSTRAINT "ProtocolSession_experimentId_fkey" FOREIGN KEY ("experimentId") REFERENCES "Experiment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Experiment" ADD CONSTRAINT "Experiment_studyId_fkey" FOREIGN KEY ("studyId") REFERENCES "Study"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ProtocolMessage" ADD CONSTRAINT "ProtocolMessage_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "ProtocolSession"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ContextSnapshot" ADD CONSTRAINT "ContextSnapshot_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "ProtocolSession"("id") ON DELETE CASCADE ON UPDATE CASCADE;
