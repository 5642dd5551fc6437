"""The planning benchmark's graph, built for each tool it compares (awlineage, Snakemake,
Luigi), and the child processes that measure them one at a time."""
