from loadtests.libraries import write

write()
