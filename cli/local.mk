# cli: the spyon command. Subcommands live in cli/*.c; the folders whose
# parts are linked into the command only (cost/plot.c) add them with
# spyon_SOURCES += and spyon_LDADD +=.
bin_PROGRAMS += spyon
spyon_SOURCES = cli/main.c cli/cli.h cli/opt.c cli/opt.h cli/run.c \
	cli/report.c cli/costs.c cli/host_st.c
spyon_CFLAGS = $(AM_CFLAGS) $(GSL_CFLAGS)
spyon_LDADD = hosts/st/libstvm.la libspyon_tools_core.la libspyon_core.la \
	$(GSL_LIBS) $(GMP_LIBS) -lm
