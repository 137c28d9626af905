module rewind.local/sdkgo

go 1.19

require rewind.local/sdk v0.0.0

replace rewind.local/sdk => ../../../guest/sdk/go
