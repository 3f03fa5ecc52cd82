-- Labelling (issue 25): a prompt-lab run, the picked prompts run as LLM-labeller runs on the job queue
-- and the tables stored once they are done. The plugin's own table.
-- CreateTable
CREATE TABLE "LabellingLabRun" (
    "id" TEXT NOT NULL,
    "studyId" TEXT NOT NULL,
    "datasetId" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "spec" JSONB NOT NULL,
    "actor" JSONB NOT NULL,
    "runs" JSONB NOT NULL DEFAULT '{}',
    "result" JSONB,
    "computeMs" INTEGER,
    "error" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "LabellingLabRun_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "LabellingLabRun_studyId_createdAt_idx" ON "LabellingLabRun"("studyId", "createdAt");

-- AddForeignKey
ALTER TABLE "LabellingLabRun" ADD CONSTRAINT "LabellingLabRun_studyId_fkey" FOREIGN KEY ("studyId") REFERENCES "Study"("id") ON DELETE CASCADE ON UPDATE CASCADE;
