; Inno Setup script for Engram (built by installers/build.py when iscc is installed; see release.yml).
;   iscc /DAppVersion=0.1.0 /DSourceDir=dist\engram /DOutputDir=dist /DIconFile=resources\engram.png engram.iss
; Per-user install (no administrator rights): Start-menu entry, optional start at login.
#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif

[Setup]
AppId={{B7A8A9BB-62A7-5AFF-80B6-E5E2E6FAA611}
AppName=Engram
AppVersion={#AppVersion}
AppPublisher=Engram
DefaultDirName={localappdata}\Programs\Engram
DefaultGroupName=Engram
PrivilegesRequired=lowest
OutputDir={#OutputDir}
OutputBaseFilename=engram-{#AppVersion}-setup
Compression=lzma2/max
SolidCompression=yes
ArchitecturesInstallIn64BitMode=x64compatible
UninstallDisplayIcon={app}\engram.exe
WizardStyle=modern

[Tasks]
Name: "autostart"; Description: "Start Engram when I log in"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: recursesubdirs ignoreversion

[Icons]
Name: "{group}\Engram"; Filename: "{app}\engramw.exe"; Parameters: "tray"
Name: "{group}\Uninstall Engram"; Filename: "{uninstallexe}"

[Registry]
; The same value the app writes for desktop.start_at_login (app/desktop/autostart.py).
Root: HKCU; Subkey: "Software\Microsoft\Windows\CurrentVersion\Run"; ValueType: string; ValueName: "Engram"; \
  ValueData: """{app}\engramw.exe"" tray"; Flags: uninsdeletevalue; Tasks: autostart

[Run]
Filename: "{app}\engramw.exe"; Parameters: "tray"; Description: "Start Engram"; Flags: nowait postinstall skipifsilent
