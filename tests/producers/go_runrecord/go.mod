module example.invalid/go_runrecord

go 1.21
