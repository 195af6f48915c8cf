module sluice
