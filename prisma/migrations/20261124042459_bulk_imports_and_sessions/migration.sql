-- DropIndex
DROP INDEX "ProtocolSession_experimentId_repetition_position_idx";

-- AlterTable
ALTER TABLE "Dataset" ADD COLUMN     "error" TEXT,
ADD COLUMN     "rowsDone" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "rowsTotal" INTEGER,
ADD COLUMN     "status" TEXT NOT NULL DEFAULT 'ready';

-- AlterTable
ALTER TABLE "Experiment" ADD COLUMN     "prepareError" TEXT,
ADD COLUMN     "sessionsCreated" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "sessionsPlanned" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "DatasetUpload" (
    "id" TEXT NOT NULL,
    "datasetId" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "position" INTEGER NOT NULL,

    CONSTRAINT "DatasetUpload_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DatasetUploadChunk" (
    "uploadId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "bytes" BYTEA NOT NULL,

    CONSTRAINT "DatasetUploadChunk_pkey" PRIMARY KEY ("uploadId","seq")
);

-- CreateIndex
CREATE INDEX "DatasetUpload_datasetId_idx" ON "DatasetUpload"("datasetId");

-- CreateIndex
CREATE UNIQUE INDEX "ProtocolSession_experimentId_repetition_position_key" ON "ProtocolSession"("experimentId", "repetition", "position");

-- AddForeignKey
ALTER TABLE "DatasetUpload" ADD CONSTRAINT "DatasetUpload_datasetId_fkey" FOREIGN KEY ("datasetId") REFERENCES "Dataset"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DatasetUploadChunk" ADD CONSTRAINT "DatasetUploadChunk_uploadId_fkey" FOREIGN KEY ("uploadId") REFERENCES "DatasetUpload"("id") ON DELETE CASCADE ON UPDATE CASCADE;
