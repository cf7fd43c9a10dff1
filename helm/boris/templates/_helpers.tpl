{{/* Chart name, truncated to the 63 characters a DNS label allows. */}}
{{- define "boris.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name: <release>-boris unless the release name already contains it. */}}
{{- define "boris.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "boris.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "boris.selectorLabels" -}}
app.kubernetes.io/name: {{ include "boris.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "boris.labels" -}}
helm.sh/chart: {{ include "boris.chart" . }}
{{ include "boris.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The Secret holding the bearer token. */}}
{{- define "boris.secretName" -}}
{{- default (include "boris.fullname" .) .Values.auth.existingSecret }}
{{- end }}

{{- define "boris.secretKey" -}}
{{- if .Values.auth.existingSecret }}{{ .Values.auth.existingSecretKey }}{{ else }}token{{ end }}
{{- end }}

{{/* The workspace claim: an existing one or the chart's. */}}
{{- define "boris.claimName" -}}
{{- default (printf "%s-workspace" (include "boris.fullname" .)) .Values.workspace.persistence.existingClaim }}
{{- end }}

{{- define "boris.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
BORIS_TOKEN from the Secret, for the sidecar agent (the token it sends).
boris itself reads the Secret as a file (boris.tokenFile), never from its
environment.
*/}}
{{- define "boris.tokenEnv" -}}
- name: BORIS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "boris.secretName" . }}
      key: {{ include "boris.secretKey" . }}
{{- end }}

{{/* ClientIP affinity when several pods hold sessions, unless set explicitly. */}}
{{- define "boris.sessionAffinity" -}}
{{- if .Values.service.sessionAffinity }}{{ .Values.service.sessionAffinity }}
{{- else if gt (int .Values.replicaCount) 1 }}ClientIP
{{- else }}None
{{- end }}
{{- end }}

{{/*
The sandboxWrite paths the chart must mount (as emptyDirs) because nothing
else provides them: every one not under the workspace or /tmp. boris
refuses to start with a sandboxWrite path that does not exist, and the
root filesystem is read-only.
*/}}
{{- define "boris.sandboxMounts" -}}
{{- $ws := trimSuffix "/" .Values.workspace.mountPath -}}
{{- $out := list -}}
{{- range .Values.config.sandboxWrite -}}
{{- $p := trimSuffix "/" (toString .) -}}
{{- if not (or (eq $p $ws) (hasPrefix (printf "%s/" $ws) $p) (eq $p "/tmp") (hasPrefix "/tmp/" $p)) -}}
{{- $out = append $out $p -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
Where the token Secret is mounted, and the file boris reads (BORIS_TOKEN_FILE):
a volume of its own, so boris denies the whole directory to the tools and
follows the kubelet's updates.
*/}}
{{- define "boris.authDir" -}}/etc/boris/auth{{- end }}
{{- define "boris.tokenFile" -}}{{ include "boris.authDir" . }}/token{{- end }}

{{/* Where the tls.secretName Secret is mounted. */}}
{{- define "boris.tlsDir" -}}/etc/boris/tls{{- end }}

{{/* http, or https with tls.secretName. */}}
{{- define "boris.scheme" -}}{{ ternary "https" "http" (not (empty .Values.tls.secretName)) }}{{- end }}

{{/*
A probe from values; with TLS an httpGet probe that names no scheme gets
HTTPS (the kubelet does not verify the certificate of a probe).
*/}}
{{- define "boris.probe" -}}
{{- $p := deepCopy .probe -}}
{{- if and .tls $p.httpGet (not $p.httpGet.scheme) -}}
{{- $_ := set $p.httpGet "scheme" "HTTPS" -}}
{{- end -}}
{{- toYaml $p -}}
{{- end -}}

{{/* Where the init container puts boris for toolchainImage. */}}
{{- define "boris.binDir" -}}/opt/boris{{- end }}
