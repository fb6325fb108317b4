import scrolloff

// The CLI's verbs live in the `scrolloff` library, which `scrolloff-dns` links as well.
ScrollOffCLI.main()
