-- CreateTable
CREATE TABLE "FleetSummaryCount" (
    "key" TEXT NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "FleetSummaryCount_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "FleetSummaryDirty" (
    "id" BIGSERIAL NOT NULL,
    "clusterId" UUID NOT NULL,

    CONSTRAINT "FleetSummaryDirty_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ClusterSummaryKeys" (
    "clusterId" UUID NOT NULL,
    "keys" TEXT[],

    CONSTRAINT "ClusterSummaryKeys_pkey" PRIMARY KEY ("clusterId")
);


-- Marks are read by cluster, and in id order when folded.
CREATE INDEX "FleetSummaryDirty_clusterId_idx" ON "FleetSummaryDirty" ("clusterId");

-- The keys a condition list counts under: type, status and reason of each element, sorted.
CREATE FUNCTION fleet_condition_keys(conditions jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT COALESCE(array_agg(k ORDER BY k), '{}')
    FROM (SELECT 'condition' || chr(31) || COALESCE(e->>'type', '') || chr(31) || COALESCE(e->>'status', '')
                 || chr(31) || COALESCE(e->>'reason', '') AS k
            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(conditions) = 'array' THEN conditions ELSE '[]' END) e) x
$$;

-- Every key one cluster counts under, as the summary scan counted it (a cluster with its desired
-- state and its status), and none for a cluster that is gone.
CREATE FUNCTION fleet_summary_keys(cid uuid) RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT COALESCE((
    SELECT ARRAY['clusters',
                 'platform' || chr(31) || c.platform::text,
                 'topology' || chr(31) || c.topology::text,
                 'sidecarVersion' || chr(31) || COALESCE(s."sidecarVersion", 'unreported')]
           || CASE WHEN s."observedGeneration" = d.generation THEN ARRAY['inSync'] ELSE '{}'::text[] END
           || CASE WHEN d.enabled THEN ARRAY['enabled'] ELSE '{}'::text[] END
           || CASE WHEN d."clusterAutoscalerMode" = 'DISABLE' THEN ARRAY['casDisabled'] ELSE '{}'::text[] END
           || CASE WHEN d.paused THEN ARRAY['paused'] ELSE '{}'::text[] END
           || fleet_condition_keys(s.conditions)
      FROM "Cluster" c JOIN "DesiredState" d ON d."clusterId" = c.id JOIN "ClusterStatus" s ON s."clusterId" = c.id
     WHERE c.id = cid), '{}')
$$;

-- Marks the changed cluster: one appended row, no lock on anything shared. The body is an
-- escaped string with no literal semicolon (octal 073), as the migration runner splits on them.
CREATE FUNCTION fleet_summary_mark() RETURNS trigger
LANGUAGE plpgsql AS E'BEGIN INSERT INTO "FleetSummaryDirty" ("clusterId") SELECT COALESCE(j->>''clusterId'', j->>''id'')::uuid FROM (SELECT to_jsonb(CASE WHEN TG_OP = ''DELETE'' THEN OLD ELSE NEW END) AS j) x\073 RETURN NULL\073 END';

CREATE TRIGGER fleet_summary_cluster_changed
  AFTER INSERT OR DELETE ON "Cluster" FOR EACH ROW EXECUTE FUNCTION fleet_summary_mark();
CREATE TRIGGER fleet_summary_cluster_updated
  AFTER UPDATE OF platform, topology, id ON "Cluster" FOR EACH ROW
  WHEN (OLD.platform IS DISTINCT FROM NEW.platform OR OLD.topology IS DISTINCT FROM NEW.topology OR OLD.id IS DISTINCT FROM NEW.id)
  EXECUTE FUNCTION fleet_summary_mark();
CREATE TRIGGER fleet_summary_desired_changed
  AFTER INSERT OR DELETE ON "DesiredState" FOR EACH ROW EXECUTE FUNCTION fleet_summary_mark();
CREATE TRIGGER fleet_summary_desired_updated
  AFTER UPDATE ON "DesiredState" FOR EACH ROW
  WHEN (OLD.generation IS DISTINCT FROM NEW.generation OR OLD.enabled IS DISTINCT FROM NEW.enabled
        OR OLD."clusterAutoscalerMode" IS DISTINCT FROM NEW."clusterAutoscalerMode" OR OLD.paused IS DISTINCT FROM NEW.paused
        OR OLD."clusterId" IS DISTINCT FROM NEW."clusterId")
  EXECUTE FUNCTION fleet_summary_mark();
CREATE TRIGGER fleet_summary_status_changed
  AFTER INSERT OR DELETE ON "ClusterStatus" FOR EACH ROW EXECUTE FUNCTION fleet_summary_mark();
-- Heartbeats move lastReportAt only, and most reports repeat the conditions: neither marks.
CREATE TRIGGER fleet_summary_status_updated
  AFTER UPDATE ON "ClusterStatus" FOR EACH ROW
  WHEN (OLD."observedGeneration" IS DISTINCT FROM NEW."observedGeneration"
        OR OLD."sidecarVersion" IS DISTINCT FROM NEW."sidecarVersion"
        OR OLD."clusterId" IS DISTINCT FROM NEW."clusterId"
        OR (OLD.conditions IS DISTINCT FROM NEW.conditions
            AND fleet_condition_keys(OLD.conditions) IS DISTINCT FROM fleet_condition_keys(NEW.conditions)))
  EXECUTE FUNCTION fleet_summary_mark();

-- The clusters registered so far.
INSERT INTO "ClusterSummaryKeys" ("clusterId", keys)
SELECT c.id, fleet_summary_keys(c.id) FROM "Cluster" c WHERE fleet_summary_keys(c.id) <> '{}';
INSERT INTO "FleetSummaryCount" (key, count)
SELECT k, count(*)::int FROM "ClusterSummaryKeys", unnest(keys) k GROUP BY k;
