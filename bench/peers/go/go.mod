module ciobench/gopeer

go 1.19
