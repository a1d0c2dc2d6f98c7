-- The digest of the report whose content the status holds (issue 48, target 1): a later report of
-- the same digest, generation and conditions changes nothing but lastReportAt, which is then all
-- the writer updates. Null before a report and from sidecars that send no digest.
ALTER TABLE "ClusterStatus" ADD COLUMN "reportDigest" CHAR(64);
