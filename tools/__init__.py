"""Makes tools/ a regular package for tools/cio_build (imported from the checkout's root, never a same-named installed package)."""
