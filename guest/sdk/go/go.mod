module rewind.local/sdk

go 1.19
