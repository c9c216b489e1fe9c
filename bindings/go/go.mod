module idmint

go 1.19
