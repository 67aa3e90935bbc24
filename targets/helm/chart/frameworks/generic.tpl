{{- else if eq $fw "generic" }}
{{- /* framework: generic (spec v1.2): no framework variables, only TRAINSPEC_* */}}
