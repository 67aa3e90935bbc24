{{/*
Helpers of the trainspec chart.  Every value that comes from values.yaml is
data: it is printed with toJson / toYaml, never evaluated with `tpl`, so text
such as "{{ .Release.Name }}" in a command, an env value or an annotation
reaches Kubernetes literally.
*/}}

{{/*
trainspec.topology: computes the job's topology from .Values into .out (a dict):
  job, namespace, jobset (workload jobset), roles (in the framework's order), counts,
  ports, hosts (role -> list of "host:port"; JobSet's pod host names with workload
  jobset), names (the same without ports), startOrder and onePodJobs (jobset), total,
  successRule, successRole.
*/}}
{{- define "trainspec.topology" -}}
{{- $v := .root.Values -}}
{{- $out := .out -}}
{{- $jobset := eq ($v.workload | default "jobs") "jobset" -}}
{{- $orders := dict "tensorflow" (list "chief" "ps" "worker" "evaluator") "pytorch" (list "master" "worker") "mxnet" (list "scheduler" "server" "worker") "mpi" (list "launcher" "worker") -}}
{{- $startOrders := dict "tensorflow" (list "ps" "chief" "worker" "evaluator") "pytorch" (list "master" "worker") "mxnet" (list "scheduler" "server" "worker") "mpi" (list "worker" "launcher") "xgboost" (list "master" "worker") "jax" (list "worker") "paddle" (list "master" "worker") -}}
{{- $onePodJobs := dict "pytorch" (list "worker") "xgboost" (list "worker") -}}
{{- if and $jobset (not (has $v.framework (list "tensorflow" "pytorch" "mxnet" "mpi" "xgboost" "jax" "paddle"))) -}}
{{- fail (printf "workload jobset: trainspec does not yet write the %s controller's variables for JobSet host names (the jobset target refuses it too); expected framework one of tensorflow, pytorch, mxnet, mpi, xgboost, jax, paddle; use workload jobs" $v.framework) -}}
{{- end -}}
{{- $perJob := get $onePodJobs $v.framework | default list -}}
{{- $roles := list -}}
{{- range $name := get $orders $v.framework -}}
{{- if hasKey $v.roles $name -}}{{- $roles = append $roles $name -}}{{- end -}}
{{- end -}}
{{- $counts := dict -}}
{{- $ports := dict -}}
{{- $hosts := dict -}}
{{- $hostNames := dict -}}
{{- $total := 0 -}}
{{- range $name := $roles -}}
{{- $r := get $v.roles $name -}}
{{- $n := int $r.replicas -}}
{{- $port := int $r.port -}}
{{- $list := list -}}
{{- $names := list -}}
{{- range $i := until $n -}}
{{- $host := printf "%s-%s-%d.%s" $v.name ($r.taskName | default $name) $i $v.name -}}
{{- if and $jobset (has $name $perJob) -}}{{- $host = printf "%s-%s-%d-0.%s" $v.name $name $i $v.name -}}
{{- else if $jobset -}}{{- $host = printf "%s-%s-0-%d.%s" $v.name $name $i $v.name -}}{{- end -}}
{{- $names = append $names $host -}}
{{- $list = append $list (printf "%s:%d" $host $port) -}}
{{- end -}}
{{- $_ := set $counts $name $n -}}
{{- $_ := set $ports $name $port -}}
{{- $_ := set $hosts $name $list -}}
{{- $_ := set $hostNames $name $names -}}
{{- if $jobset -}}
{{- /* the jobset target refuses these (compiler/checks.py jobset): so does the chart */ -}}
{{- if eq $r.restartPolicy "Always" -}}
{{- fail (printf "roles.%s.restartPolicy: workload jobset runs the %s pods as Job pods, which cannot use restartPolicy Always; use OnFailure (restarts after a failure), or workload jobs (a one-pod Deployment)" $name $name) -}}
{{- end -}}
{{- if gt $n 0 -}}
{{- $jsLongest := printf "%s-%s-0-%d" $v.name $name (sub $n 1) -}}
{{- if has $name $perJob -}}{{- $jsLongest = printf "%s-%s-%d-0" $v.name $name (sub $n 1) -}}{{- end -}}
{{- if gt (len $jsLongest) 57 -}}
{{- fail (printf "workload jobset: pod names such as %s-abcde are longer than 63 characters (the JobSet webhook refuses them): shorten name, or use workload jobs" $jsLongest) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $total = add $total $n -}}
{{- $longest := printf "%s-%s-%d" $v.name ($r.taskName | default $name) (max (sub $n 1) 0) -}}
{{- if gt (len $longest) 63 -}}
{{- fail (printf "generated name %q is %d characters; Kubernetes allows 63: lower roles.%s.replicas or shorten name" $longest (len $longest) $name) -}}
{{- end -}}
{{- end -}}
{{- if gt $total 100000 -}}
{{- fail (printf "%d replicas in all; trainspec allows at most 100000" $total) -}}
{{- end -}}
{{- if eq $v.framework "tensorflow" -}}
{{- if and (gt (int (get $counts "ps" | default 0)) 0) (eq (int (get $counts "worker" | default 0)) 0) -}}
{{- fail "parameter servers without workers: set roles.worker.replicas to at least 1" -}}
{{- end -}}
{{- if eq (add (int (get $counts "chief" | default 0)) (int (get $counts "worker" | default 0))) 0 -}}
{{- fail "no chief and no worker replica: a tensorflow job needs one of them" -}}
{{- end -}}
{{- end -}}
{{- $rule := "" -}}
{{- $successRole := "" -}}
{{- $successScope := "" -}}
{{- $successIndex := 0 -}}
{{- if eq $v.framework "tensorflow" -}}
{{- if gt (int (get $counts "chief" | default 0)) 0 -}}{{- $rule = "chief-0 succeeds" -}}{{- $successRole = "chief" -}}{{- $successScope = "one" -}}{{- $successIndex = 0 -}}
{{- else if eq (($v.tensorflow | default dict).successPolicy | default "") "AllWorkers" -}}{{- $rule = "all workers succeed" -}}{{- $successRole = "worker" -}}{{- $successScope = "all" -}}{{- $successIndex = 0 -}}
{{- else -}}{{- $rule = "worker-0 succeeds" -}}{{- $successRole = "worker" -}}{{- $successScope = "one" -}}{{- $successIndex = 0 -}}{{- end -}}
{{- else if eq $v.framework "pytorch" -}}
{{- if gt (int (get $counts "master" | default 0)) 0 -}}{{- $rule = "master-0 succeeds" -}}{{- $successRole = "master" -}}{{- $successScope = "one" -}}{{- $successIndex = 0 -}}
{{- else -}}{{- $rule = "all workers succeed" -}}{{- $successRole = "worker" -}}{{- $successScope = "all" -}}{{- $successIndex = 0 -}}{{- end -}}
{{- else if eq $v.framework "mxnet" -}}{{- $rule = "scheduler-0 succeeds" -}}{{- $successRole = "scheduler" -}}{{- $successScope = "one" -}}{{- $successIndex = 0 -}}
{{- else -}}{{- $rule = "launcher-0 succeeds" -}}{{- $successRole = "launcher" -}}{{- $successScope = "one" -}}{{- $successIndex = 0 -}}{{- end -}}
{{- $pin := list -}}
{{- range $name := $roles -}}
{{- $pin = append $pin (printf "%s=%d:%d" $name (get $counts $name) (get $ports $name)) -}}
{{- end -}}
{{- $_ := set $out "job" $v.name -}}
{{- $_ := set $out "namespace" .root.Release.Namespace -}}
{{- $_ := set $out "roles" $roles -}}
{{- $_ := set $out "counts" $counts -}}
{{- $_ := set $out "ports" $ports -}}
{{- $_ := set $out "hosts" $hosts -}}
{{- $_ := set $out "total" $total -}}
{{- $_ := set $out "successRule" $rule -}}
{{- $_ := set $out "successRole" $successRole -}}
{{- $_ := set $out "successScope" $successScope -}}
{{- $_ := set $out "successIndex" $successIndex -}}
{{- $_ := set $out "jobset" $jobset -}}
{{- $_ := set $out "names" $hostNames -}}
{{- $_ := set $out "startOrder" (get $startOrders $v.framework) -}}
{{- $_ := set $out "onePodJobs" $perJob -}}
{{- $_ := set $out "pin" (join "," $pin) -}}
{{- end -}}

{{/* trainspec.envRole: a role name as used in env names (TRAINSPEC_NUM_<ROLE>). */}}
{{- define "trainspec.envRole" -}}
{{- . | upper | replace "-" "_" -}}
{{- end -}}

{{/* trainspec.labels: the job's labels; .role adds app.kubernetes.io/component, .index (a replica's
pod) or .pod (a role's one pod template) trainspec.dev/role, .index trainspec.dev/index. */}}
{{- define "trainspec.labels" -}}
{{- $v := .root.Values -}}
{{- $labels := dict -}}
{{- range $k, $val := $v.labels | default dict -}}{{- $_ := set $labels $k $val -}}{{- end -}}
{{- $_ := set $labels "app.kubernetes.io/name" $v.name -}}
{{- $_ := set $labels "app.kubernetes.io/instance" $v.name -}}
{{- if .role -}}{{- $_ := set $labels "app.kubernetes.io/component" .role -}}{{- end -}}
{{- $_ := set $labels "app.kubernetes.io/part-of" $v.name -}}
{{- $_ := set $labels "app.kubernetes.io/managed-by" "trainspec" -}}
{{- $_ := set $labels "trainspec.dev/job" $v.name -}}
{{- if and .workload $v.scheduling -}}{{- with $v.scheduling.queue -}}{{- $_ := set $labels "kueue.x-k8s.io/queue-name" . -}}{{- end -}}{{- end -}}
{{- if or (hasKey . "index") .pod -}}{{- $_ := set $labels "trainspec.dev/role" .role -}}{{- end -}}
{{- if hasKey . "index" -}}{{- $_ := set $labels "trainspec.dev/index" (toString .index) -}}{{- end -}}
{{- toYaml $labels -}}
{{- end -}}

{{/*
trainspec.yaml: an object as YAML (toYaml), unless its text holds characters a
YAML 1.1 reader does not take raw (DEL, the C1 controls and NEL, U+FFFE, U+FFFF):
go-yaml then fails (toYaml prints nothing) or writes NEL raw (read back as a line
break).  Such an object is written as JSON, which is YAML, with those characters
escaped, so every value reaches Kubernetes exactly.
*/}}
{{- define "trainspec.yaml" -}}
{{- $json := toJson . -}}
{{- if regexMatch "[\\x{7f}-\\x{9f}\\x{fffe}\\x{ffff}]" $json -}}
{{- range $c := concat (untilStep 127 160 1) (list 65534 65535) -}}
{{- $json = replace (printf "%c" $c) (printf "\\u%04x" $c) $json -}}
{{- end -}}
{{- $json -}}
{{- else -}}
{{- toYaml . -}}
{{- end -}}
{{- end -}}

{{/* trainspec.metadata: name, namespace, labels and the job's annotations (+ .annotations). */}}
{{- define "trainspec.metadata" -}}
name: {{ .name | toJson }}
namespace: {{ .root.Release.Namespace | toJson }}
labels:
  {{- include "trainspec.labels" . | nindent 2 }}
{{- $annotations := dict -}}
{{- range $k, $val := .root.Values.annotations | default dict -}}{{- $_ := set $annotations $k $val -}}{{- end -}}
{{- range $k, $val := .annotations | default dict -}}{{- $_ := set $annotations $k $val -}}{{- end -}}
{{- if $annotations }}
annotations:
  {{- include "trainspec.yaml" $annotations | nindent 2 }}
{{- end -}}
{{- end -}}

{{/*
trainspec.text: a string value of command, args or env.  .v is either a plain
string (used as is) or a list of parts, each a literal string or one of
  {var: role|index|replicas|port|job.name|job.namespace}
  {hosts: <role>, join: <separator>}      the role's "host:port" list, joined
  {byIndex: [...], pin: <topology>}       per-replica text compiled for one topology
The parts are the spec's `{{ ... }}` templates, compiled to data by trainspec.
*/}}
{{- define "trainspec.text" -}}
{{- $ctx := .ctx -}}
{{- if kindIs "string" .v -}}
{{- .v -}}
{{- else -}}
{{- range $p := .v -}}
{{- if kindIs "string" $p -}}
{{- $p -}}
{{- else if hasKey $p "var" -}}
{{- if eq $p.var "role" -}}{{- $ctx.role -}}
{{- else if eq $p.var "index" -}}{{- $ctx.index -}}
{{- else if eq $p.var "replicas" -}}{{- $ctx.replicas -}}
{{- else if eq $p.var "port" -}}{{- $ctx.port -}}
{{- else if eq $p.var "job.name" -}}{{- $ctx.job -}}
{{- else if eq $p.var "job.namespace" -}}{{- $ctx.namespace -}}
{{- else -}}{{- fail (printf "unknown template variable %q" $p.var) -}}
{{- end -}}
{{- else if hasKey $p "hosts" -}}
{{- if not (hasKey $ctx.hosts $p.hosts) -}}{{- fail (printf "hosts.%s: no such role" $p.hosts) -}}{{- end -}}
{{- join ($p.join | default "") (get $ctx.hosts $p.hosts) -}}
{{- else if hasKey $p "byIndex" -}}
{{- $want := $p.pin -}}
{{- $have := $ctx.pin -}}
{{- if $p.pinNamespace -}}{{- $have = printf "%s@%s" $have $ctx.namespace -}}{{- end -}}
{{- if ne $want $have -}}
{{- fail (printf "role %s: its command, args or env use a template the chart cannot recompute, compiled for %q; this install has %q. Change the spec and recompile, or keep the compiled replicas and ports" $ctx.role $want $have) -}}
{{- end -}}
{{- index $p.byIndex (int $ctx.index) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* trainspec.escape: text that survives the kubelet's $(VAR) expansion ("$(" -> "$$(", "$$" -> "$$$"). */}}
{{- define "trainspec.escape" -}}
{{- if contains "$" . -}}
{{- regexReplaceAll "\\$\\$([^$(]|$)" (replace "$" "$$" .) "$$${1}" -}}
{{- else -}}
{{- . -}}
{{- end -}}
{{- end -}}

{{/*
trainspec.kubelet: a command/args/env value as the kubelet must receive it.  With workload
jobs, the replica's text, escaped.  With workload jobset, a role's one pod template:
{var: index} is .ctx.index, the token below when the replicas differ, which becomes
$(TRAINSPEC_INDEX) (the text around it escaped as if "(" followed, so a "$" just before
stays literal); a {byIndex} text is the jobset text trainspec compiled for it (`jobset`),
already kubelet text, and the chart refuses the jobset workload when there is none.
*/}}
{{- define "trainspec.kubelet" -}}
{{- $ctx := .ctx -}}
{{- $token := "\ue000trainspec-index\ue000" -}}
{{- if and $ctx.template (kindIs "slice" .v) (eq (len .v) 1) (kindIs "map" (first .v)) (hasKey (first .v) "byIndex") -}}
{{- $p := first .v -}}
{{- $_ := include "trainspec.text" (dict "v" (list (omit $p "jobset" "k8s")) "ctx" (merge (dict "index" 0) $ctx)) -}}
{{- if not (hasKey $p $ctx.template) -}}
{{- fail (printf "role %s: its command, args or env differ per replica in a way one JobSet pod template cannot express (nothing to rebuild from $(TRAINSPEC_INDEX)); use workload jobs" $ctx.role) -}}
{{- end -}}
{{- get $p $ctx.template -}}
{{- else -}}
{{- $text := include "trainspec.text" (dict "v" .v "ctx" $ctx) -}}
{{- if and $ctx.template (contains $token $text) -}}
{{- $chunks := splitList $token $text -}}
{{- $last := sub (len $chunks) 1 -}}
{{- range $k, $chunk := $chunks -}}
{{- if lt $k $last -}}{{- trimSuffix "(" (include "trainspec.escape" (printf "%s(" $chunk)) -}}$(TRAINSPEC_INDEX)
{{- else -}}{{- include "trainspec.escape" $chunk -}}{{- end -}}
{{- end -}}
{{- else -}}
{{- include "trainspec.escape" $text -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* trainspec.strings: a list of command/args values as a YAML flow list, each as trainspec.kubelet. */}}
{{- define "trainspec.strings" -}}
{{- $ctx := .ctx -}}
{{- $out := list -}}
{{- range $s := .v -}}
{{- $out = append $out (include "trainspec.kubelet" (dict "v" $s "ctx" $ctx)) -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* trainspec.userEnv: the user's env list (values format) as Kubernetes EnvVars (JSON). */}}
{{- define "trainspec.userEnv" -}}
{{- $ctx := .ctx -}}
{{- $out := list -}}
{{- range $e := .v -}}
{{- if hasKey $e "secretKeyRef" -}}
{{- $out = append $out (dict "name" $e.name "valueFrom" (dict "secretKeyRef" (dict "name" $e.secretKeyRef.name "key" $e.secretKeyRef.key))) -}}
{{- else if hasKey $e "configMapKeyRef" -}}
{{- $out = append $out (dict "name" $e.name "valueFrom" (dict "configMapKeyRef" (dict "name" $e.configMapKeyRef.name "key" $e.configMapKeyRef.key))) -}}
{{- else if or (hasKey $e "fieldRef") (hasKey $e "resourceFieldRef") -}}
{{- $out = append $out (dict "name" $e.name "valueFrom" (omit $e "name")) -}}
{{- else -}}
{{- $out = append $out (dict "name" $e.name "value" (include "trainspec.kubelet" (dict "v" ($e.value | default "") "ctx" $ctx))) -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* trainspec.resources: the spec's {cpu, memory, gpu} as Kubernetes requests/limits (JSON). */}}
{{- define "trainspec.resources" -}}
{{- $res := .res | default dict -}}
{{- $amounts := dict -}}
{{- if hasKey $res "cpu" -}}{{- $_ := set $amounts "cpu" $res.cpu -}}{{- end -}}
{{- if hasKey $res "memory" -}}{{- $_ := set $amounts "memory" $res.memory -}}{{- end -}}
{{- $limits := deepCopy $amounts -}}
{{- if gt (int ($res.gpu | default 0)) 0 -}}{{- $_ := set $limits .accelerator (int $res.gpu) -}}{{- end -}}
{{- $amounts = merge $amounts ($res.requests | default dict) -}}
{{- $limits = merge $limits ($res.limits | default dict) -}}
{{- $out := dict -}}
{{- if $amounts -}}{{- $_ := set $out "requests" $amounts -}}{{- end -}}
{{- if $limits -}}{{- $_ := set $out "limits" $limits -}}{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* trainspec.mounts: volumeMounts for the job's volumes and /dev/shm (JSON). */}}
{{- define "trainspec.mounts" -}}
{{- $out := list -}}
{{- range $vol := .volumes | default list -}}
{{- $m := dict "name" $vol.name "mountPath" $vol.mountPath -}}
{{- if $vol.readOnly -}}{{- $_ := set $m "readOnly" true -}}{{- end -}}
{{- $out = append $out $m -}}
{{- end -}}
{{- if (.res | default dict).shm -}}
{{- $out = append $out (dict "name" "dshm" "mountPath" "/dev/shm") -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* trainspec.image: a role's image reference from {repository, tag}. */}}
{{- define "trainspec.image" -}}
{{- if .tag -}}{{- printf "%s:%s" .repository .tag -}}{{- else -}}{{- .repository -}}{{- end -}}
{{- end -}}
