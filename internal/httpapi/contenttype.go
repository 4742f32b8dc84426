package httpapi

import (
	"mime"
	"path"
	"strings"
)

// contentTypes are the media types of the files Strata serves, ahead of
// the system's table (which lacks some and differs between hosts).
var contentTypes = map[string]string{
	".m4s":  "video/iso.segment",
	".mp4":  "video/mp4",
	".m4a":  "audio/mp4",
	".m4v":  "video/mp4",
	".mov":  "video/quicktime",
	".webm": "video/webm",
	".mkv":  "video/x-matroska",
	".mpd":  "application/dash+xml",
	".m3u8": "application/vnd.apple.mpegurl",
	".ts":   "video/mp2t",
	".mp3":  "audio/mpeg",
	".json": "application/json",
	".vtt":  "text/vtt",
}

// ContentType is the media type of a file name, by its extension:
// application/octet-stream when neither table knows it.
func ContentType(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if ct, ok := contentTypes[ext]; ok {
		return ct
	}
	if ct := mime.TypeByExtension(ext); ct != "" {
		return ct
	}
	return "application/octet-stream"
}
