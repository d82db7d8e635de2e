"""Role prompts of the BuildArena workflow (our own words; spec 4.1 lists what each must carry)."""
