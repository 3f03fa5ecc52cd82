-- Labelling (issue 25): the adjudicated final label of an item of a labelling run, per question, with
-- the adjudicator's note. The plugin's own table; the labels stay the sessions' messages.
-- CreateTable
CREATE TABLE "LabelAdjudication" (
    "id" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "itemId" TEXT NOT NULL,
    "question" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "note" TEXT NOT NULL,
    "adjudicatorId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "LabelAdjudication_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "LabelAdjudication_runId_position_question_key" ON "LabelAdjudication"("runId", "position", "question");

-- AddForeignKey
ALTER TABLE "LabelAdjudication" ADD CONSTRAINT "LabelAdjudication_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;
