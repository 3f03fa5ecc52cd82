-- CreateIndex
CREATE INDEX "LlmCall_sessionRef_idx" ON "LlmCall"("sessionRef");
