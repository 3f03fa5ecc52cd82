-- CreateTable
CREATE TABLE "LlmConnection" (
    "id" TEXT NOT NULL,
    "studyId" TEXT,
    "name" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "baseUrl" TEXT NOT NULL,
    "apiKeyEnc" TEXT,
    "apiKeyLast4" TEXT,
    "defaultModel" TEXT NOT NULL,
    "apiVersion" TEXT,
    "extraHeaders" JSONB NOT NULL DEFAULT '{}',
    "timeoutMs" INTEGER NOT NULL DEFAULT 60000,
    "maxConcurrency" INTEGER NOT NULL DEFAULT 4,
    "requestsPerMinute" INTEGER,
    "tokensPerMinute" INTEGER,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "LlmConnection_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ModelPreset" (
    "id" TEXT NOT NULL,
    "studyId" TEXT,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ModelPreset_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ModelPresetVersion" (
    "id" TEXT NOT NULL,
    "presetId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "connectionId" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "temperature" DOUBLE PRECISION,
    "topP" DOUBLE PRECISION,
    "maxTokens" INTEGER,
    "seed" INTEGER,
    "systemPrompt" TEXT NOT NULL DEFAULT '',
    "responseFormat" TEXT NOT NULL DEFAULT 'text',
    "jsonSchema" JSONB,
    "vision" BOOLEAN NOT NULL DEFAULT false,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ModelPresetVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "LlmCall" (
    "id" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "connectionId" TEXT,
    "presetVersionId" TEXT,
    "studyId" TEXT,
    "purpose" TEXT NOT NULL,
    "userId" TEXT,
    "sessionRef" TEXT,
    "messageRef" TEXT,
    "provider" TEXT NOT NULL,
    "modelRequested" TEXT NOT NULL,
    "modelReported" TEXT,
    "params" JSONB NOT NULL,
    "seed" INTEGER,
    "promptHash" TEXT NOT NULL,
    "request" JSONB NOT NULL,
    "response" JSONB,
    "error" TEXT,
    "errorKind" TEXT,
    "httpStatus" INTEGER,
    "status" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "tokensIn" INTEGER NOT NULL DEFAULT 0,
    "tokensOut" INTEGER NOT NULL DEFAULT 0,
    "latencyMs" INTEGER NOT NULL DEFAULT 0,
    "ttftMs" INTEGER,
    "costUsd" DOUBLE PRECISION,
    "cached" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "LlmCall_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ModelPrice" (
    "id" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "inputPerMTok" DOUBLE PRECISION NOT NULL,
    "outputPerMTok" DOUBLE PRECISION NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ModelPrice_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "LlmConnection_studyId_idx" ON "LlmConnection"("studyId");

-- CreateIndex
CREATE INDEX "ModelPreset_studyId_idx" ON "ModelPreset"("studyId");

-- CreateIndex
CREATE UNIQUE INDEX "ModelPresetVersion_presetId_version_key" ON "ModelPresetVersion"("presetId", "version");

-- CreateIndex
CREATE INDEX "LlmCall_createdAt_idx" ON "LlmCall"("createdAt");

-- CreateIndex
CREATE INDEX "LlmCall_studyId_createdAt_idx" ON "LlmCall"("studyId", "createdAt");

-- CreateIndex
CREATE INDEX "LlmCall_promptHash_idx" ON "LlmCall"("promptHash");

-- CreateIndex
CREATE INDEX "LlmCall_modelRequested_idx" ON "LlmCall"("modelRequested");

-- CreateIndex
CREATE INDEX "LlmCall_userId_createdAt_idx" ON "LlmCall"("userId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "ModelPrice_model_key" ON "ModelPrice"("model");

-- AddForeignKey
ALTER TABLE "LlmConnection" ADD CONSTRAINT "LlmConnection_studyId_fkey" FOREIGN KEY ("studyId") REFERENCES "Study"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ModelPreset" ADD CONSTRAINT "ModelPreset_studyId_fkey" FOREIGN KEY ("studyId") REFERENCES "Study"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ModelPresetVersion" ADD CONSTRAINT "ModelPresetVersion_presetId_fkey" FOREIGN KEY ("presetId") REFERENCES "ModelPreset"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ModelPresetVersion" ADD CONSTRAINT "ModelPresetVersion_connectionId_fkey" FOREIGN KEY ("connectionId") REFERENCES "LlmConnection"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LlmCall" ADD CONSTRAINT "LlmCall_connectionId_fkey" FOREIGN KEY ("connectionId") REFERENCES "LlmConnection"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LlmCall" ADD CONSTRAINT "LlmCall_presetVersionId_fkey" FOREIGN KEY ("presetVersionId") REFERENCES "ModelPresetVersion"("id") ON DELETE SET NULL ON UPDATE CASCADE;
