-- MINT (issue 26): the authors' released results.jsonl files imported into a study, one row per file,
-- with the outcome of each record (never the histories), for the leaderboard beside Parley's own runs.
-- CreateTable
CREATE TABLE "MintImportedRun" (
    "id" TEXT NOT NULL,
    "studyId" TEXT NOT NULL,
    "importId" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "feedback" TEXT,
    "phf" TEXT,
    "k" INTEGER NOT NULL,
    "p" INTEGER NOT NULL,
    "taskType" TEXT NOT NULL,
    "dataset" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "records" INTEGER NOT NULL,
    "successes" INTEGER NOT NULL,
    "outcomes" JSONB NOT NULL,
    "importedById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MintImportedRun_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "MintImportedRun_studyId_path_key" ON "MintImportedRun"("studyId", "path");

-- CreateIndex
CREATE INDEX "MintImportedRun_studyId_model_idx" ON "MintImportedRun"("studyId", "model");

-- AddForeignKey
ALTER TABLE "MintImportedRun" ADD CONSTRAINT "MintImportedRun_studyId_fkey" FOREIGN KEY ("studyId") REFERENCES "Study"("id") ON DELETE CASCADE ON UPDATE CASCADE;
