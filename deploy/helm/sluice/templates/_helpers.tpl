{{/* Names. The full name stays short: a pool's StatefulSet appends "-controller" and
Kubernetes appends an ordinal and a revision hash to it, in 63-character labels. */}}
{{- define "sluice.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{- define "sluice.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "sluice.headless" -}}
{{- printf "%s-headless" (include "sluice.fullname" .) -}}
{{- end -}}

{{- define "sluice.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sluice.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "sluice.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "sluice.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "sluice.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The pools with replicas, as {"pools": [...]}: each with its component, StatefulSet
name, roles, replicas, first node id (its first ordinal) and resources. */}}
{{- define "sluice.pools" -}}
{{- $full := include "sluice.fullname" . -}}
{{- $pools := list -}}
{{- range $p := list (list "combined" .Values.combined $full "broker,controller")
                     (list "controller" .Values.controllers (printf "%s-controller" $full) "controller")
                     (list "broker" .Values.brokers (printf "%s-broker" $full) "broker") -}}
{{- $v := index $p 1 -}}
{{- if gt (int $v.replicas) 0 -}}
{{- $roles := index $p 3 -}}
{{- $pools = append $pools (dict "component" (index $p 0) "name" (index $p 2) "roles" $roles
      "broker" (contains "broker" $roles) "controller" (contains "controller" $roles)
      "replicas" (int $v.replicas) "start" (int $v.nodeIdStart) "resources" ($v.resources | default dict)) -}}
{{- end -}}
{{- end -}}
{{- toJson (dict "pools" $pools) -}}
{{- end -}}

{{/* A pod's DNS name under the headless Service. Args: root, StatefulSet name, ordinal. */}}
{{- define "sluice.podHost" -}}
{{- $root := index . 0 -}}
{{- printf "%s-%d.%s.%s.svc.%s" (index . 1) (int (index . 2)) (include "sluice.headless" $root) $root.Release.Namespace $root.Values.clusterDomain -}}
{{- end -}}

{{/* controller.quorum.voters: every node of the pools with the controller role, by the
stable DNS name of its pod. */}}
{{- define "sluice.voters" -}}
{{- $root := . -}}
{{- $voters := list -}}
{{- range (include "sluice.pools" . | fromJson).pools -}}
{{- if .controller -}}
{{- $pool := . -}}
{{- range $i := until (int .replicas) -}}
{{- $id := add $pool.start $i -}}
{{- $voters = append $voters (printf "%d@%s:%d" (int $id) (include "sluice.podHost" (list $root $pool.name $id)) (int $root.Values.ports.controller)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- join "," $voters -}}
{{- end -}}

{{/* The keys the chart sets per pool, by key, as {"settings": {...}}. $(POD_NAME) is
expanded by Kubernetes from the container's POD_NAME variable. node.id is not here: it is
passed as --override node.id=$(POD_INDEX), so a missing pod-index label stops the node
instead of leaving it the image's default id. */}}
{{- define "sluice.settings" -}}
{{- $root := index . 0 -}}
{{- $pool := index . 1 -}}
{{- $v := $root.Values -}}
{{- $host := printf "$(POD_NAME).%s.%s.svc.%s" (include "sluice.headless" $root) $root.Release.Namespace $v.clusterDomain -}}
{{- $listen := list -}}
{{- $advertise := list -}}
{{- if $pool.broker -}}
{{- $listen = append $listen (printf "PLAINTEXT://:%d" (int $v.ports.client)) -}}
{{- $advertise = append $advertise (printf "PLAINTEXT://%s:%d" $host (int $v.ports.client)) -}}
{{- end -}}
{{- if $pool.controller -}}
{{- $listen = append $listen (printf "CONTROLLER://:%d" (int $v.ports.controller)) -}}
{{- $advertise = append $advertise (printf "CONTROLLER://%s:%d" $host (int $v.ports.controller)) -}}
{{- end -}}
{{- $s := dict
  "process.roles" $pool.roles
  "listeners" (join "," $listen)
  "advertised.listeners" (join "," $advertise)
  "listener.security.protocol.map" "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
  "controller.listener.names" "CONTROLLER"
  "controller.quorum.voters" (include "sluice.voters" $root)
  "log.dirs" "/var/lib/sluice/data"
  "sluice.metrics.listener" (printf ":%d" (int $v.ports.metrics))
  "sluice.log.format" $v.logFormat
  "sluice.log.level" $v.logLevel -}}
{{- if $pool.broker -}}
{{- $_ := set $s "inter.broker.listener.name" "PLAINTEXT" -}}
{{- end -}}
{{- toJson (dict "settings" $s) -}}
{{- end -}}

{{/* The keys of sluice.settings and node.id: values.config may not set them. */}}
{{- define "sluice.ownedKeys" -}}
node.id broker.id process.roles listeners advertised.listeners listener.security.protocol.map controller.listener.names controller.quorum.voters controller.quorum.bootstrap.servers inter.broker.listener.name security.inter.broker.protocol log.dirs log.dir metadata.log.dir sluice.metrics.listener sluice.log.format sluice.log.level
{{- end -}}

{{/* The variable sluice server --config-env maps to a key, as Kafka's image does:
KAFKA_ (SLUICE_ for sluice.* keys), upper case, "-" as "___", "_" as "__", "." as "_". */}}
{{- define "sluice.envName" -}}
{{- $k := . -}}
{{- $prefix := "KAFKA_" -}}
{{- if hasPrefix "sluice." $k -}}
{{- $prefix = "SLUICE_" -}}
{{- $k = trimPrefix "sluice." $k -}}
{{- end -}}
{{- printf "%s%s" $prefix ($k | replace "_" "__" | replace "-" "___" | replace "." "_" | upper) -}}
{{- end -}}

{{/* The server's environment: the pod's name and index (downward API), the cluster id
(which formats an empty volume) and the pool's settings as KAFKA_* and SLUICE_* variables
for --config-env. */}}
{{- define "sluice.env" -}}
{{- $root := index . 0 -}}
{{- $pool := index . 1 -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_INDEX
  valueFrom:
    fieldRef:
      fieldPath: metadata.labels['apps.kubernetes.io/pod-index']
- name: CLUSTER_ID
  valueFrom:
    configMapKeyRef:
      name: {{ include "sluice.fullname" $root }}-cluster
      key: cluster.id
{{- range $k, $v := (include "sluice.settings" (list $root $pool) | fromJson).settings }}
- name: {{ include "sluice.envName" $k }}
  value: {{ $v | quote }}
{{- end }}
{{- end -}}

{{/* A server property's value as text: a whole number read from YAML (a float64) without
an exponent, anything else as written. */}}
{{- define "sluice.propValue" -}}
{{- if and (kindIs "float64" .) (eq (. | float64) (. | int64 | float64)) -}}
{{- . | int64 -}}
{{- else -}}
{{- . | toString | replace "\\" "\\\\" | replace "\n" "\\n" -}}
{{- end -}}
{{- end -}}

{{/* server.properties: the chart's replication defaults for the number of brokers, then
values.config. */}}
{{- define "sluice.serverProperties" -}}
{{- $brokers := add (int .Values.combined.replicas) (int .Values.brokers.replicas) -}}
{{- $rf := min 3 $brokers -}}
{{- $isr := ternary 2 1 (ge (int $rf) 3) -}}
{{- $props := dict
  "default.replication.factor" $rf
  "min.insync.replicas" $isr
  "offsets.topic.replication.factor" $rf
  "transaction.state.log.replication.factor" $rf
  "transaction.state.log.min.isr" $isr -}}
{{- $props = merge (deepCopy (.Values.config | default dict)) $props -}}
# Written by the sluice chart: replication defaults for {{ $brokers }} brokers and values.config.
# The chart's per-pool keys come from the environment (sluice server --config-env).
{{- range $k, $v := $props }}
{{ $k }}={{ include "sluice.propValue" $v }}
{{- end }}
{{- end -}}

{{/* Refuses values that would make a broken cluster, each with the value to change. */}}
{{- define "sluice.validate" -}}
{{- $pools := (include "sluice.pools" . | fromJson).pools -}}
{{- $voters := 0 -}}
{{- $brokers := 0 -}}
{{- range $pools -}}
{{- if .controller }}{{ $voters = add $voters .replicas }}{{ end -}}
{{- if .broker }}{{ $brokers = add $brokers .replicas }}{{ end -}}
{{- end -}}
{{- if eq (int $voters) 0 -}}
{{- fail "no controllers: set combined.replicas or controllers.replicas (3 or 5 voters keep a quorum through one or two failures)" -}}
{{- end -}}
{{- if eq (int $brokers) 0 -}}
{{- fail "no brokers: set combined.replicas or brokers.replicas" -}}
{{- end -}}
{{- range $i, $a := $pools -}}
{{- range $j, $b := $pools -}}
{{- if and (lt $i $j) (lt (int $a.start) (add $b.start $b.replicas)) (lt (int $b.start) (add $a.start $a.replicas)) -}}
{{- fail (printf "node ids overlap: the %s pool has %d..%d and the %s pool %d..%d; move one pool's nodeIdStart" $a.component (int $a.start) (int (sub (add $a.start $a.replicas) 1)) $b.component (int $b.start) (int (sub (add $b.start $b.replicas) 1))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $owned := splitList " " (include "sluice.ownedKeys" .) -}}
{{- range $k, $_ := .Values.config -}}
{{- if has $k $owned -}}
{{- fail (printf "config.%s: the chart sets %s itself (from the pools, ports and logFormat values)" $k $k) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.clusterId (not (regexMatch "^[A-Za-z0-9_-]{22}$" .Values.clusterId)) -}}
{{- fail (printf "clusterId %q is not a Kafka UUID (22 characters of base64url; make one with `sluice storage random-uuid`)" .Values.clusterId) -}}
{{- end -}}
{{- end -}}
