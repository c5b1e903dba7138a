"""Campaigns: many checkmpi-halo runs (sweeps x strategies x repeated
submissions), executed here or through Slurm, recorded one file per run and
reported as the seed's Table 4 to 7 (docs/campaign.md)."""
