# cli: the spyon command. Subcommands live in cli/*.c; the fragments of cost/
# and hosts/st/ add theirs with spyon_SOURCES += and spyon_LDADD +=.
bin_PROGRAMS += spyon
spyon_SOURCES = cli/main.c cli/cli.h cli/opt.c cli/opt.h cli/run.c \
	cli/report.c
spyon_CFLAGS = $(AM_CFLAGS)
spyon_LDADD = libspyon_tools.la libspyon_core.la
