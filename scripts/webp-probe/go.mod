module webpprobe

go 1.26.8

require github.com/HugoSmits86/nativewebp v0.9.3
