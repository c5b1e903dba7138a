from checkmpi.cli import main

raise SystemExit(main())
