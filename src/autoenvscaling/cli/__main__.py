from autoenvscaling.cli.app import main

main()
