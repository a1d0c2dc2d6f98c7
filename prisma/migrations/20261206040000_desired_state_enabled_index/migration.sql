-- The clusters with Karpenter enabled, for a filtered list's totalCount (issue 48, target 4): the
-- count reads up to TOTAL_COUNT_LIMIT + 1 matches, each a probe into DesiredState when the filter
-- names karpenterEnabled. Against this partial index a probe is index-only (no heap visit) into an
-- index half the size: the count of 1,001 matches among 100,000 clusters 10.4 → 7.7 ms.
-- Partial indexes are not said in schema.prisma, so this migration is their definition.
CREATE INDEX "DesiredState_enabled_clusterId_idx" ON "DesiredState" ("clusterId") WHERE enabled;
