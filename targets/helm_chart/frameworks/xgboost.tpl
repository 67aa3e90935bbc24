{{- else if eq $fw "xgboost" }}
{{- $rank := $i }}
{{- if eq $role "worker" }}{{ $rank = add $i (get $t.counts "master") }}{{ end }}
{{- $fwEnv = append $fwEnv (dict "name" "MASTER_PORT" "value" (toString (get $t.ports "master"))) }}
{{- $fwEnv = append $fwEnv (dict "name" "MASTER_ADDR" "value" (printf "%s-master-0" $t.job)) }}
{{- $fwEnv = append $fwEnv (dict "name" "WORLD_SIZE" "value" (toString $t.total)) }}
{{- $fwEnv = append $fwEnv (dict "name" "RANK" "value" (toString $rank)) }}
{{- $fwEnv = append $fwEnv (dict "name" "PYTHONUNBUFFERED" "value" "1") }}
{{- if gt (int $t.total) 1 }}
{{- $fwEnv = append $fwEnv (dict "name" "WORKER_PORT" "value" (toString (get $t.ports "worker"))) }}
{{- $addrs := list }}
{{- range $w := until (int (sub $t.total 1)) }}{{ $addrs = append $addrs (printf "%s-worker-%d" $t.job $w) }}{{ end }}
{{- $fwEnv = append $fwEnv (dict "name" "WORKER_ADDRS" "value" (join "," $addrs)) }}
{{- end }}
