module compat/workload

go 1.19
