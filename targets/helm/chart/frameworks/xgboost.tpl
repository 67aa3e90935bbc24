{{- else if eq $fw "xgboost" }}
{{- $rank := $i }}
{{- if eq $role "worker" }}{{ $rank = add $i (get $t.counts "master") }}{{ end }}
{{- $fwEnv = append $fwEnv (dict "name" "MASTER_PORT" "value" (toString (get $t.ports "master"))) }}
{{- $fwEnv = append $fwEnv (dict "name" "MASTER_ADDR" "value" (first (get $t.names "master"))) }}
{{- $fwEnv = append $fwEnv (dict "name" "WORLD_SIZE" "value" (toString $t.total)) }}
{{- /* workload jobset: workers are one-pod Jobs after the master, so the job-global-index is the rank */}}
{{- $rankEnv := dict "name" "RANK" "value" (toString $rank) }}
{{- if and $js (ne $role "master") }}{{ $rankEnv = dict "name" "RANK" "valueFrom" (dict "fieldRef" (dict "fieldPath" "metadata.labels['jobset.sigs.k8s.io/job-global-index']")) }}{{ end }}
{{- $fwEnv = append $fwEnv $rankEnv }}
{{- $fwEnv = append $fwEnv (dict "name" "PYTHONUNBUFFERED" "value" "1") }}
{{- if gt (int $t.total) 1 }}
{{- $fwEnv = append $fwEnv (dict "name" "WORKER_PORT" "value" (toString (get $t.ports "worker"))) }}
{{- $addrs := list }}
{{- if $js }}
{{- $workers := get $t.names "worker" | default list }}
{{- $addrs = slice $workers 0 (min (len $workers) (int (sub $t.total 1))) }}
{{- $fwEnv = append $fwEnv (dict "name" "WORKER_ADDRS" "value" (join "," $addrs)) }}
{{- else }}
{{- /* workload jobs: the list once per job, in the topology ConfigMap (topology.yaml) */}}
{{- $fwEnv = append $fwEnv (dict "name" "WORKER_ADDRS" "valueFrom" (dict "configMapKeyRef" (dict "name" (printf "%s-topology" $t.job) "key" "XGBOOST_WORKER_ADDRS"))) }}
{{- end }}
{{- end }}
