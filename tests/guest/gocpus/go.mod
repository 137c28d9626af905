module rewind.test/gocpus

go 1.19
